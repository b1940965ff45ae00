#!/bin/bash
# Item 138's follow-up: job_e1 found 256 14-20% slower with the early acquire (det and unordered
# alike) and 192 1% slower. Sides: head (HEAD's final library, built on the GPU machine),
# headlocal (the same source built on the CI machine: /tmp/ci13, 38b0e09), early (job_e1's), re
# (early + the semaphore polled with relaxed loads, one acquire at the end; 192 / 256 units only).
# Carry .site and .ab/libs. Tests run on re.
LIBS='.ab/libs/head.so.gz .ab/libs/headlocal.so.gz .ab/libs/early.so.gz .ab/libs/re.so.gz' ROUNDS=2 SASS=0 \
BENCH='bench/bench_bwd.py --hdim 192 256 --seqlen 4096 16384 --mask full causal --impl dash_det --warm-s 1 --min-s 0.5' \
TESTS='tests/test_deadlock.py tests/test_head_dims.py -k "(single_writer or new_backward_bitwise or recorded_order or split_head) and (hd192- or hd256 or 192-192 or 256-256) and not fp16 and not float16"' TESTS_TIMEOUT=200 \
bash bench/ab_job.sh
