#!/bin/bash
# hdim 64 forward: A (HEAD), B (per-flag steps, compiled mask steps), B3 (hdim 64 with the run-time mask test).
START=$(date +%s)
export PYTHONUNBUFFERED=1
el() { echo "$(( $(date +%s)-START ))s"; }
ab() {  # ab <tag> <sides> <bench args>
  local tag=$1 sides=$2; shift 2
  for round in 1 2; do
    for side in $sides; do
      gunzip -c .ab/libs/$side.so.gz > dash/_C.abi3.so
      timeout 150 python3 bench/bench_fwd.py "$@" --impls dash --warm-s 1 --min-s 0.5 > $OUT/${tag}_${side}_$round.txt 2>&1
      echo "== $tag $side r$round $(el): $(grep -E '^\| [0-9x]+ ' $OUT/${tag}_${side}_$round.txt | awk -F'|' '{print $2 $3 $4 $5}' | tr -s ' ' | tr '\n' ';')"
    done
  done
}
ab plain "fwdA fwdB fwdB3" --hdims 64 --seqlens 4096 16384 --masks full causal
ab cap "fwdA fwdB3" --hdims 64 --seqlens 4096 16384 --masks full causal --softcap 30
cd $OUT && tar czf logs.tgz *.txt && rm -rf *.txt
