#!/bin/bash
# Call 3 (session 32). Carry .ab/libs/s32.so.gz (every unit, this session's code), .ab/libs/s26f.so.gz
# (525be6d's hdim 64 / 128 bf16 forward units: session 26's landed forward, whose grid beside FA3 is
# README's table) and .ab/libs/v96.so.gz (hdim 96 bf16 forward units on 192 x 96 tiles, three MMA
# warpgroups; check_sass ok, 56-58 LDL / STL per task outside the MMA loop).
# (A) Is the forward slower than session 26's? Call 2's grid beside FA3 read hdim 64 causal 0.980-0.994
#     (s26: 1.000-1.008) and dash 2-3% below s26's numbers at 4k-16k causal while FA3 read the same.
#     Prediction: within +-1% (every forward change since was measured plain within noise: items 211,
#     217), i.e. machine-to-machine spread (item 169), not a regression.
# (B) hdim 96's forward on 192 x 96 (item 39's lead: full +5-8%, causal -1..+2% on the kernels of then).
#     Prediction: full +2-5%, causal -2..+1%.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
B="bench/bench_fwd.py --hdims 64 128 --seqlens 2048 4096 16384 --masks causal full --impls dash --warm-s 1 --min-s 0.5"
LIBS='.ab/libs/s32.so.gz .ab/libs/s26f.so.gz' BENCH="$B" ROUNDS=2 SASS=0 OUT=$OUT/ab_s26 bash bench/ab_job.sh 2>&1 | tail -14
echo "A done at $(t)"
B="bench/bench_fwd.py --hdims 96 --seqlens 2048 4096 16384 --masks full causal --impls dash --warm-s 1 --min-s 0.5"
LIBS='.ab/libs/s32.so.gz .ab/libs/v96.so.gz' BENCH="$B" ROUNDS=2 SASS=0 OUT=$OUT/ab_v96 bash bench/ab_job.sh 2>&1 | tail -8
echo "all done at $(t)"
