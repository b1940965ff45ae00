#!/bin/bash
# Call 3 (session 35): the forward with the late tile draw (fd1: exp/fwd-draw-late, hdim 64 / 128 bf16
# forward units) beside FlashAttention-3 0251105a (.ab/fa3v, not committed), one process per order
# (dash first, then FA3 first), the grid 512-16k both masks, and 4 heads at 16k / 32k causal.
# Prediction (item 253's A/B): causal ratios up ~1-2% on session 33's 0.975-1.001 (item 243), so
# 0.99-1.02 from 2k; full masks unchanged (1.01-1.035).
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
gunzip -c .ab/libs/fd1.so.gz > dash/_C.abi3.so
G='--warm-s 1 --min-s 0.5'
for order in "dash fa3" "fa3 dash"; do
  tag=$(echo $order | tr ' ' _)
  PYTHONPATH=$PWD/.ab/fa3v timeout 280 python3 bench/bench_fwd.py $G --hdims 64 128 --seqlens 512 1024 2048 4096 8192 16384 \
    --masks causal full --impls $order > $OUT/grid_$tag.txt 2>&1
  echo "grid $tag rc=$? at $(t)"
  PYTHONPATH=$PWD/.ab/fa3v timeout 100 python3 bench/bench_fwd.py $G --hdims 128 --hidden 512 --total-tokens 32768 \
    --seqlens 16384 32768 --masks causal --impls $order > $OUT/h4_$tag.txt 2>&1
  echo "h4 $tag rc=$? at $(t)"
done
grep -h -E "^\|" $OUT/*.txt | head -80
