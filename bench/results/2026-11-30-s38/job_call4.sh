#!/bin/bash
# Session 38, call 4: the forward's short causal points beside FlashAttention-3 0251105a (.ab/fa3v), main's
# library (`land`), in six processes that alternate which implementation runs first: hdim 64 / 128, causal,
# 1k / 2k / 4k (the points that read 0.96-0.99 in session 37's two processes and 1.00-1.015 in others).
# Carry .ab/libs/land.so.gz .ab/fa3v.
# Prediction: pooled dash / FA3 0.97-0.99 at hdim 128 2k-4k, 0.98-1.01 at hdim 64 2k-4k; a process's ratio
# spreads by +-2%.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/.ab/fa3v:${PYTHONPATH:-}
gunzip -c .ab/libs/land.so.gz > dash/_C.abi3.so
for r in 1 2 3 4 5 6; do
  order="dash fa3"; [ $((r % 2)) = 0 ] && order="fa3 dash"
  timeout 80 python3 bench/bench_fwd.py --warm-s 1 --min-s 0.5 --hdims 128 64 --seqlens 1024 2048 4096 \
    --masks causal --impls $order > $OUT/fwd_r$r.txt 2>&1
  echo "round $r ($order) rc=$? at $(t)"
done
grep -h -E "^\|" $OUT/fwd_r*.txt | head -60
