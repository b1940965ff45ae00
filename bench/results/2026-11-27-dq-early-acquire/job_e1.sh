#!/bin/bash
# The single dQ writer (192, 192 / 128, 256: one staging buffer) waits for its step's turn as soon
# as the producer has published the step's record, while the MMA warpgroups still compute the
# partial (bench/RESULTS.md item 138), against HEAD's final library (head.so.gz: acquire after
# the hand-off). Libraries built on the CI machine (setup.py, DASH_INSTANTIATIONS): early.so.gz
# (this change) and early_u.so.gz (the same with deterministic=False unordered at every head dim:
# the bindings without bwd_orders_both_modes, for its "dash" column only). Carry .site and .ab/libs.
# Tests run on early (the last side).
LIBS='.ab/libs/head.so.gz .ab/libs/early_u.so.gz .ab/libs/early.so.gz' ROUNDS=2 SASS=0 \
BENCH='bench/bench_bwd.py --hdim 192 256 --seqlen 4096 16384 --mask full causal --impl dash_det dash --warm-s 1 --min-s 0.5 ;; bench/bench_bwd.py --hdim 192x128 --seqlen 16384 --mask full causal --impl dash_det dash --warm-s 1 --min-s 0.5 ;; bench/bench_bwd.py --hdim 128 --seqlen 16384 --mask full causal --impl dash_det --warm-s 1 --min-s 0.5' \
TESTS='tests/test_deadlock.py tests/test_head_dims.py -k "(single_writer or hd192 or hd256) and not fp16 and not float16 and not FP16"' TESTS_TIMEOUT=240 \
bash bench/ab_job.sh
