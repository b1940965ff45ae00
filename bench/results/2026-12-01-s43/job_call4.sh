#!/bin/bash
# Session 43, call 4: what call 1's `dqr` non-det loss is made of. hdim 256's non-det backward three ways, each
# library in its own process, two rounds: land41 (the ordered, staged kernel for both modes: the trait's
# "bwd_nondet_order": "ordered"), `stu` (the same kernels, non-det unordered: the trait line removed), `dqr`
# (unordered adds from registers, two Q and two dO stages).
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
LIBS='.ab/libs/land41.so.gz .ab/libs/stu.so.gz .ab/libs/dqr.so.gz' ROUNDS=2 SASS=0 \
  BENCH='bench/bench_bwd.py --hdim 256 --seqlen 4096 16384 --mask full causal --impl dash --warm-s 1 --min-s 0.5' \
  OUT=$OUT/ab timeout 400 bash bench/ab_job.sh > $OUT/ab_stdout.txt 2>&1
echo "ab rc=$? at $(t)"; grep -A12 "^| bench" $OUT/ab_stdout.txt
