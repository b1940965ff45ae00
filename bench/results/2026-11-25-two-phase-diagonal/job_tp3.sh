#!/bin/bash
# Windowed backward against FlexAttention on HEAD's kernels (issue 13's 1.5x bar), two rounds.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT/l
ROOT=$PWD
export PYTHONUNBUFFERED=1
gunzip -c .ab/base.so.gz > $ROOT/dash/_C.abi3.so
START=$(date +%s)
for r in 1 2; do
  PYTHONPATH=$ROOT timeout 260 python3 bench/bench_bwd.py --hdim 128 64 --seqlen 16384 32768 --total-tokens 32768 \
    --mask causal --window 4096 --impl dash_det dash flex --warm-s 1 --min-s 0.5 --out /tmp/bw > $OUT/l/window_$r.txt 2>&1
  echo "round $r rc=$? $(( $(date +%s) - START ))s"
done
cd $OUT && tar -czf logs.tgz l && rm -rf l
