#!/bin/bash
# job_s3.sh's A/B again: its sob2 library lacked the forward units bench_bwd needs for out / LSE
# (the bits check and test_bwd_correctness ran: s3/). sob2 now holds the hdim 64 / 128 bf16 forward
# units too (built from main's forward code, unchanged). Prediction as in job_s3.sh (item 167).
# Carry .ab/libs/cb47de3.so.gz and .ab/libs/sob2.so.gz.
OUT=${OUT:-/tmp/out}
LIBS='.ab/libs/cb47de3.so.gz .ab/libs/sob2.so.gz' SASS=0 ROUNDS=2 \
BENCH='bench/bench_bwd.py --hdim 64 128 --seqlen 2048 4096 16384 --mask full causal --impl dash_det dash --warm-s 1 --min-s 0.5' \
OUT=$OUT bash bench/ab_job.sh
