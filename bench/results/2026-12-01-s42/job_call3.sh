#!/bin/bash
# Session 42, call 3: deterministic causal calls in ascending order (the order non-det causal `auto` runs, longest
# tasks first from a counter), dealt in chunks of 1 / 2 / 4 walks (DASH_DEAL_CHUNK; the kernel's default for
# deterministic bands is all walks in one chunk) against det diagonal (`auto`) and non-det, hdim 192 and 128,
# one process per chunk value; and hdim 128's non-det kernel in diagonal order.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/land41.so.gz > dash/_C.abi3.so
for hd in 192 128; do
  if [ $hd = 192 ]; then S="4096 16384"; else S="4096 8192 16384"; fi
  python3 bench/bench_bwd.py --hdim $hd --seqlen $S --mask causal --impl dash dash:diagonal dash_det dash_det:ascending --warm-s 1 --min-s 0.5 --out $OUT/x > $OUT/b${hd}_base.txt 2>&1
  for c in 1 2 4; do
    DASH_DEAL_CHUNK=$c python3 bench/bench_bwd.py --hdim $hd --seqlen $S --mask causal --impl dash_det:ascending --warm-s 1 --min-s 0.5 --out $OUT/x > $OUT/b${hd}_c$c.txt 2>&1
  done
  echo "$hd at $(t)"
  grep -h "^ *$hd " $OUT/b${hd}_base.txt; for c in 1 2 4; do echo "chunk $c:"; grep -h "^ *$hd " $OUT/b${hd}_c$c.txt; done
done
rm -rf $OUT/x
