#!/bin/bash
# A/B: the backward's step tile published with its mask flag (stepflag) against HEAD (walk).
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
LIBS='.ab/libs/walk.so.gz .ab/libs/stepflag.so.gz' ROUNDS=2 OUT=$OUT/ab \
  BENCH='bench/bench_bwd.py --hdim 128 64 --seqlen 2048 4096 16384 --mask causal full --impl dash_det --warm-s 1 --min-s 0.5 ;; bench/bench_bwd.py --hdim 128 --seqlen 16384 32768 --total-tokens 32768 --mask causal --window 4096 --impl dash_det --warm-s 1 --min-s 0.5' \
  TESTS='tests/test_bwd_correctness.py tests/test_determinism.py tests/test_deadlock.py -k "not float16 and not fp16"' \
  timeout 570 bash bench/ab_job.sh 2>&1 | tail -40
