#!/bin/bash
# job_s1.sh's change with one named barrier per (warpgroup, Q stage) (split_dq_parity.patch: no
# barrier phase can see a warpgroup arrive twice), built on the GPU machine beside HEAD; its
# hdim 64 / 128 bf16 backward tests, then one round of the benchmark.
# Carry .site and .ab/splitdq.
VARIANT=.ab/splitdq UNITS='fwd_hdim64_bf16_*,fwd_hdim128_bf16_*,bwd_hdim64_bf16_full,bwd_hdim64_bf16_band,bwd_hdim128_bf16_full,bwd_hdim128_bf16_band' ROUNDS=1 \
BENCH='bench/bench_bwd.py --hdim 64 128 --seqlen 2048 4096 16384 --mask full causal --impl dash_det dash --warm-s 1 --min-s 0.5' \
TESTS='tests/test_bwd_correctness.py tests/test_determinism.py tests/test_invariance.py tests/test_deadlock.py tests/test_gqa.py tests/test_varlen.py -k "(64 or 128) and not float16 and not fp16 and not softcap"' \
bash bench/ab_job.sh
