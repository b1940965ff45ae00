#!/bin/bash
# hdim 64's backward row statistics (LSE, D) read from smem as 8-byte pairs where they are used
# (row_stats_at_use.patch) instead of an eighth held per lane and 32 shuffles each a step:
# ldsa (both LSE and D), ldsb (D only; LSE still held and shuffled), against HEAD. Libraries of
# fwd_hdim{64,128}_bf16_*, bwd_hdim{64,128}_bf16_{band,full} built on the CI machine (HEAD's
# objects, the variants' hdim 64 backward units). Carry .ab/built.
LIBS='.ab/built/e2base.so.gz .ab/built/ldsa.so.gz .ab/built/ldsb.so.gz' ROUNDS=3 \
BENCH='bench/bench_bwd.py --hdim 64 --seqlen 2048 4096 8192 16384 --mask full causal --impl dash_det dash --warm-s 1 --min-s 0.5' \
TESTS='tests/test_bwd_correctness.py tests/test_determinism.py tests/test_invariance.py -k "64 and not float16 and not fp16 and not softcap"' \
bash bench/ab_job.sh
