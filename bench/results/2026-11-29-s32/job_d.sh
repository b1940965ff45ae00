#!/bin/bash
# Call 4 (session 32). Carry .ab/libs/s32.so.gz (every unit), .ab/libs/v96.so.gz (hdim 96 bf16 forward on
# 192 x 96, O staged through smem as today: 56-58 LDL / STL a tile outside the MMA loop) and
# .ab/libs/v96d.so.gz (the same tile with O stored from the registers, "direct").
# hdim 96's forward on 192 x 96 again, plain and softcap 30 (the same kernel serves both), two rounds.
# Prediction: v96 as in call 3 (full +3-7%, causal -0.5..+3%); softcap calls gain less (the running-max
# capped walk is MUFU-bound, item 207): 0..+3%; v96d within 1% of v96 (the per-tile spills are
# outside the loop; item 94: hdim 64's staged vs direct -0.7..-2.7%).
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
B="bench/bench_fwd.py --hdims 96 --seqlens 2048 4096 16384 --masks full causal --impls dash --warm-s 1 --min-s 0.5"
LIBS='.ab/libs/s32.so.gz .ab/libs/v96.so.gz .ab/libs/v96d.so.gz' BENCH="$B ;; $B --softcap 30" ROUNDS=2 SASS=0 \
  OUT=$OUT/ab bash bench/ab_job.sh 2>&1 | tail -16
echo "all done at $(t)"
