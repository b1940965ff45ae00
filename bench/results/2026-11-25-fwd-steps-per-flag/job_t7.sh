#!/bin/bash
# hdim 128 forward with the per-flag steps: K / V stage releases by every MMA thread (final3) against one thread a warpgroup (fwdW).
START=$(date +%s)
export PYTHONUNBUFFERED=1
el() { echo "$(( $(date +%s)-START ))s"; }
for round in 1 2; do
  for side in final3 fwdW; do
    gunzip -c .ab/libs/$side.so.gz > dash/_C.abi3.so
    timeout 100 python3 bench/bench_fwd.py --hdims 128 64 --seqlens 4096 16384 --masks full causal --impls dash --warm-s 1 --min-s 0.5 > $OUT/w_${side}_$round.txt 2>&1
    echo "== $side r$round $(el): $(grep -E '^\| [0-9x]+ ' $OUT/w_${side}_$round.txt | awk -F'|' '{print $2 $3 $4 $5}' | tr -s ' ' | tr '\n' ';')"
  done
done
cd $OUT && tar czf logs.tgz *.txt && rm -f *.txt
