#!/bin/bash
# hdim 128 forward with the per-flag steps: O rescale before P V (fwdB, the trait table's choice) against after (fwd128after).
START=$(date +%s)
export PYTHONUNBUFFERED=1
el() { echo "$(( $(date +%s)-START ))s"; }
for round in 1 2; do
  for side in fwdB fwd128after; do
    gunzip -c .ab/libs/$side.so.gz > dash/_C.abi3.so
    timeout 100 python3 bench/bench_fwd.py --hdims 128 --seqlens 2048 4096 16384 --masks full causal --impls dash --warm-s 1 --min-s 0.5 > $OUT/r_${side}_$round.txt 2>&1
    echo "== $side r$round $(el): $(grep -E '^\| [0-9x]+ ' $OUT/r_${side}_$round.txt | awk -F'|' '{print $2 $3 $4 $5}' | tr -s ' ' | tr '\n' ';')"
  done
done
cd $OUT && tar czf logs.tgz *.txt && rm -f *.txt
