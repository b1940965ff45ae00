#!/bin/bash
# Session 39, call 7: K / V multicast in the fixed-offset softcap kernels (bf16 softcap calls at 192 / 256 run
# a forward kernel of their own, which the landed form leaves without multicast). mcsc = the landed structure
# with the multicast kernel allowed beside a fixed-offset softcap kernel (config.h's kHasKvMulticastKernel; both
# multicast kernels check_sass ok, MMA loops 497 / 431 against 488 / 419); landsc = main's same units (192 and
# 256 bf16 full softcap). A/B two rounds, softcap 30. Carry .ab/libs/landsc.so.gz .ab/libs/mcsc.so.gz.
# Prediction: as the plain kernels at 192 / 256 (item 286: +2..+5% from 2k), perhaps less (softcap's longer
# softmax makes a KV tile's compute longer against the same loads).
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
LIBS='.ab/libs/landsc.so.gz .ab/libs/mcsc.so.gz' ROUNDS=2 SASS=0 \
  BENCH='bench/bench_fwd.py --hdims 192 256 --seqlens 2048 4096 16384 --masks full --softcap 30 --impls dash --warm-s 1 --min-s 0.5' \
  OUT=$OUT/ab timeout 240 bash bench/ab_job.sh > $OUT/ab_stdout.txt 2>&1
echo "ab rc=$? at $(t)"; tail -8 $OUT/ab_stdout.txt
