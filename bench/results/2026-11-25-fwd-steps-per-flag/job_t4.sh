#!/bin/bash
# Forward A/B: A (HEAD) vs B (steps per mask / softcap flag, each in its own loop). Two rounds, alternating.
START=$(date +%s)
export PYTHONUNBUFFERED=1
el() { echo "$(( $(date +%s)-START ))s"; }
ab() {  # ab <tag> <bench args>
  local tag=$1; shift
  for round in 1 2; do
    for side in fwdA fwdB; do
      gunzip -c .ab/libs/$side.so.gz > dash/_C.abi3.so
      timeout 150 python3 bench/bench_fwd.py "$@" --impls dash --warm-s 1 --min-s 0.5 > $OUT/${tag}_${side}_$round.txt 2>&1
      echo "== $tag $side r$round $(el): $(grep -E '^\| [0-9x]+ ' $OUT/${tag}_${side}_$round.txt | awk -F'|' '{print $2 $3 $4 $5}' | tr -s ' ' | tr '\n' ';')"
    done
  done
}
ab plain --hdims 128 64 --seqlens 4096 16384 --masks full causal
ab cap --hdims 128 64 --seqlens 4096 16384 --masks full causal --softcap 30
ab other --hdims 96 192 192x128 256 --seqlens 4096 16384 --masks full causal
cd $OUT && tar czf logs.tgz *.txt && rm -rf *.txt
