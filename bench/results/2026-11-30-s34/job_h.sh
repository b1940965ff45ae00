#!/bin/bash
# Call 10 (session 34): where the causal forward's ~1.7% to FA3 goes with 4 heads at 32k (item 248's
# addendum): Nsight Compute, one launch each, active against elapsed cycles (a tail shows as the
# difference), instructions. Carry .ab/libs/ci33.so.gz and .ab/fa3v.
# Prediction: the same instructions a tile as at 16 heads; the gap in the launch's tail (elapsed - active),
# since with 1024 tiles of up to 256 KV steps the longest-first counter ends on short tiles but sections of
# 2 heads hold 512 tiles each.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
gunzip -c .ab/libs/ci33.so.gz > dash/_C.abi3.so
M=gpu__time_duration.sum,sm__cycles_active.avg,sm__cycles_active.max,sm__cycles_elapsed.max,sm__inst_executed.sum,smsp__cycles_active.avg
for s in "32768 4 1" "16384 16 1"; do
  tag=$(echo $s | tr ' ' _)
  PYTHONPATH=$PWD timeout 120 ncu --clock-control none --profile-from-start off -k regex:attn_fwd --metrics $M \
    python3 bench/results/2026-11-30-s34/prof_fwd.py dash $s > $OUT/ncu_dash_$tag.txt 2>&1
  PYTHONPATH=$PWD:$PWD/.ab/fa3v timeout 120 ncu --clock-control none --profile-from-start off --kernel-name-base demangled -k regex:FlashAttnFwd --metrics $M \
    python3 bench/results/2026-11-30-s34/prof_fwd.py fa3 $s > $OUT/ncu_fa3_$tag.txt 2>&1
  for f in $OUT/ncu_dash_$tag.txt $OUT/ncu_fa3_$tag.txt; do echo "== $(basename $f)"; grep -E "gpu__time|sm__cycles|inst_executed|==PROF==|Error" $f | head -12; done
done
