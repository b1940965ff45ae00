#!/bin/bash
# The KV-row split's dQ GEMM in two halves by keys (split_dq.patch): a warpgroup issues the half
# over its own keys as soon as its dS is stored, and waits for the other warpgroup's dS (a named
# barrier per warpgroup: arrive after storing, sync before the other half) only before the
# second half; correct, unlike item 127's bound. Built on the GPU machine beside HEAD.
# Carry .site and .ab/splitdq.
VARIANT=.ab/splitdq UNITS='fwd_hdim64_bf16_*,fwd_hdim128_bf16_*,bwd_hdim64_bf16_full,bwd_hdim64_bf16_band,bwd_hdim128_bf16_full,bwd_hdim128_bf16_band' ROUNDS=2 \
BENCH='bench/bench_bwd.py --hdim 64 128 --seqlen 2048 4096 16384 --mask full causal --impl dash_det dash --warm-s 1 --min-s 0.5' \
TESTS='tests/test_bwd_correctness.py tests/test_determinism.py tests/test_invariance.py tests/test_deadlock.py -k "(64 or 128) and not float16 and not fp16 and not softcap"' \
bash bench/ab_job.sh
