#!/bin/bash
# Session 44, call 2: hdim 256 backward libraries, two rounds each, one process per library and round:
# 1. softcap 30 det / non-det at 4k / 16k: x80full (softcap kernels: dK GEMM first, then the dQ GEMM's two slices)
#    against land41_256 (main's hdim 256 units, both dtypes);
# 2. bf16 plain det at 2k / 4k / 8k / 16k, full and causal: land41_256, x80full, and x80dq (x80 with
#    "bwd_last_gemm": "dq" for the plain kernels too: dK before the dQ slices; bf16 units of 256 only).
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
LIBS='.ab/libs/land41_256.so.gz .ab/libs/x80full.so.gz' ROUNDS=2 SASS=0 \
  BENCH='bench/bench_bwd.py --hdim 256 --seqlen 4096 16384 --mask full causal --impl dash_det dash --softcap 30 --warm-s 1 --min-s 0.5' \
  OUT=$OUT/ab_softcap timeout 200 bash bench/ab_job.sh > $OUT/ab_softcap_stdout.txt 2>&1
echo "ab softcap rc=$? at $(t)"; grep -A12 "^| bench" $OUT/ab_softcap_stdout.txt
LIBS='.ab/libs/land41_256.so.gz .ab/libs/x80full.so.gz .ab/libs/x80dq.so.gz' ROUNDS=2 SASS=0 \
  BENCH='bench/bench_bwd.py --hdim 256 --seqlen 2048 4096 8192 16384 --mask full causal --impl dash_det --warm-s 1 --min-s 0.5' \
  OUT=$OUT/ab_plain timeout 330 bash bench/ab_job.sh > $OUT/ab_plain_stdout.txt 2>&1
echo "ab plain rc=$? at $(t)"; grep -A12 "^| bench" $OUT/ab_plain_stdout.txt
