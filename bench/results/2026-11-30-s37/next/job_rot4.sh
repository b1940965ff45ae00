#!/bin/bash
# Prepared in session 37 (no device time left to run it): `rot4` (branch exp/fwd-rotated4: rot3 with the first
# S GEMM back inside each mask copy of the first step, the previous tile's epilogue right after it: main's
# step code plus the rotation) against `land`, two rounds, four points. Carry .ab/libs/land.so.gz
# .ab/libs/rot4.so.gz. Prediction: if rot3's loss was its restructured first step, rot4 runs within
# +-0.5% of land at 16k and +0.5-1.5% at causal 2k / 4k; if the overlap itself costs, rot4 loses like rot3.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
LIBS='.ab/libs/land.so.gz .ab/libs/rot4.so.gz' ROUNDS=2 SASS=0 \
  BENCH='bench/bench_fwd.py --hdims 128 --seqlens 2048 4096 16384 --masks causal --impls dash --warm-s 1 --min-s 0.5;;bench/bench_fwd.py --hdims 128 --seqlens 2048 16384 --masks full --impls dash --warm-s 1 --min-s 0.5' \
  OUT=$OUT/ab timeout 150 bash bench/ab_job.sh
