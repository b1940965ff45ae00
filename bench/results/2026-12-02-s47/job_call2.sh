#!/bin/bash
# Call 2: session 46's job_next.sh with libraries built on the CPU machine (no build on the GPU):
# a = CI's full library of 74184e5 run with DASH_TEST_ITEM_ORDER_TAIL=1 (item-order tail at 128,
# no tail code at 64 / 96 / 192 / 192x128: main), b = HEAD + tail_all_pairs.patch (the reversed tail
# at every pair but 256; 11 units). Tests of the tail on b, then two rounds, det causal.
set -u
SIDE_ENV_full74184e5='DASH_TEST_ITEM_ORDER_TAIL=1' LIBS='.ab/libs/full74184e5.so.gz .ab/libs/tailall.so.gz' SASS=0 \
TESTS='tests/test_determinism.py -k "tail or diagonal or auto" tests/test_deadlock.py -k "diagonal or window"' \
ROUNDS=2 OUT=${OUT:-/tmp/ab_next} \
BENCH='bench/bench_bwd.py --hdim 64 96 192 192x128 --seqlen 8192 16384 --mask causal --impl dash_det --warm-s 1 --min-s 0.5 ;; bench/bench_bwd.py --hdim 64 96 192 --seqlen 16384 --hidden 384 --mask causal --impl dash_det --warm-s 1 --min-s 0.5 ;; bench/bench_bwd.py --hdim 128 --seqlen 16384 --hidden 1024 --heads-kv 2 --mask causal --impl dash_det --warm-s 1 --min-s 0.5' \
  bash bench/ab_job.sh
