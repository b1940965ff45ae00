#!/bin/bash
# Session 39, call 6: K / V multicast at hdim 64 and 96 (three MMA warpgroups; FA3 does not cluster there).
# mc96 = the landed structure with "fwd_kv_multicast_min_seqlen_k" 1 at 64 and 96 (their multicast kernels at
# 32 / 160 registers as the plain ones: check_sass ok, at 40 / 152 hdim 64's spilled and serialized), land96 =
# main's same units (bf16 full). A/B, two rounds. Carry .ab/libs/land96.so.gz .ab/libs/mc96.so.gz.
# Prediction: 96 +0..+2% from 4k (a K / V tile of 192 values a key against 192 query rows: less to save than at
# 128's 128 rows), 64 -1..+1% (its walk is bound by the softmax, item 107), both negative at 1k-2k.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
LIBS='.ab/libs/land96.so.gz .ab/libs/mc96.so.gz' ROUNDS=2 SASS=0 \
  BENCH='bench/bench_fwd.py --hdims 96 64 --seqlens 1024 2048 4096 8192 16384 --masks full --impls dash --warm-s 1 --min-s 0.5' \
  OUT=$OUT/ab timeout 300 bash bench/ab_job.sh > $OUT/ab_stdout.txt 2>&1
echo "ab rc=$? at $(t)"; tail -12 $OUT/ab_stdout.txt
