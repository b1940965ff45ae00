#!/bin/bash
# Call 8 (session 34): the deterministic causal schedules at long lengths (RESULTS item 251). Carry
# .ab/libs/ci33.so.gz (HEAD's kernels). `auto` (diagonal, dealt from a counter, each head's longest walk
# last), `descending` (ascending adds, walks from the last Q tile down, static rounds dealt longest first,
# snake order; grid-invariant dQ order too) and the grid-dependent symmetric shift, beside non-det; hdim 128
# with 4 heads (hidden 512) and 16 heads (hidden 2048) at 16k / 32k tokens, hdim 64 with 4 heads at 32k.
# Prediction: with 4 heads descending removes diagonal's tail (det / non-det 0.92-0.93 -> 0.96-0.99) unless
# its walks, which meet at the last Q tile in static rounds, wait on each other (items 102, 143: 2-30% below
# diagonal on the usual grid); with 16 heads descending -1..-5% against diagonal.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
gunzip -c .ab/libs/ci33.so.gz > dash/_C.abi3.so
I='dash_det dash_det:descending dash_det:symmetric_shift dash'
G='--mask causal --warm-s 1 --min-s 0.5'
python3 bench/bench_bwd.py $G --hdim 128 --seqlen 16384 32768 --total-tokens 32768 --hidden 512 --impl $I > $OUT/f_h128_h4.txt 2>&1
echo "h128 4 heads rc=$? at $(t)"; grep -E "^ *128 |Error" $OUT/f_h128_h4.txt
python3 bench/bench_bwd.py $G --hdim 128 --seqlen 16384 32768 --total-tokens 32768 --impl $I > $OUT/f_h128_h16.txt 2>&1
echo "h128 16 heads rc=$? at $(t)"; grep -E "^ *128 |Error" $OUT/f_h128_h16.txt
python3 bench/bench_bwd.py $G --hdim 64 --seqlen 32768 --total-tokens 32768 --hidden 256 --impl $I > $OUT/f_h64_h4.txt 2>&1
echo "h64 4 heads rc=$? at $(t)"; grep -E "^ *64 |Error" $OUT/f_h64_h4.txt
echo "all done at $(t)"
