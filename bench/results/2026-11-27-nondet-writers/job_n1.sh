#!/bin/bash
# The non-deterministic backward with the deterministic mode's two dQ writers and buffers (step t
# in buffer t % 2; no semaphores), against HEAD (one writer, one buffer), and each non-det
# schedule beside the det auto; both trees built on the GPU machine. Carry .site and .ab/nd2
# (HEAD with nondet_two_writers.patch).
VARIANT=.ab/nd2 UNITS='fwd_hdim64_bf16_*,fwd_hdim128_bf16_*,bwd_hdim64_bf16_full,bwd_hdim64_bf16_band,bwd_hdim128_bf16_full,bwd_hdim128_bf16_band' ROUNDS=2 \
BENCH='bench/bench_bwd.py --hdim 64 128 --seqlen 4096 16384 --mask full causal --impl dash_det dash dash:ascending dash:diagonal --warm-s 1 --min-s 0.5' \
TESTS='tests/test_bwd_correctness.py tests/test_determinism.py tests/test_deadlock.py -k "(64 or 128) and not float16 and not fp16"' \
bash bench/ab_job.sh
