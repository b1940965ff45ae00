#!/bin/bash
# Forward diagnostics: A (HEAD), B (steps per mask/softcap flag: P V wait after ~half the exps),
# C (B's structure with a run-time softcap test before the softmax: P V wait before it, as HEAD).
START=$(date +%s)
export PYTHONUNBUFFERED=1
el() { echo "$(( $(date +%s)-START ))s"; }
B1='bench/bench_fwd.py --hdims 128 64 --seqlens 4096 16384 --masks full causal --impls dash --warm-s 1 --min-s 0.5'
for round in 1 2; do
  for side in fwdA fwdB fwdC; do
    gunzip -c .ab/libs/$side.so.gz > dash/_C.abi3.so
    timeout 120 python3 $B1 > $OUT/f2_${side}_$round.txt 2>&1
    echo "== $side round $round at $(el): $(grep -E '^\| (64|128) ' $OUT/f2_${side}_$round.txt | awk -F'|' '{print $2 $3 $4 $5}' | tr -s ' ' | tr '\n' ';')"
  done
done
B2='bench/bench_fwd.py --hdims 128 64 --seqlens 4096 16384 --masks full causal --impls dash --softcap 30 --warm-s 1 --min-s 0.5'
for round in 1 2; do
  for side in fwdA fwdB; do
    gunzip -c .ab/libs/$side.so.gz > dash/_C.abi3.so
    timeout 120 python3 $B2 > $OUT/cap_${side}_$round.txt 2>&1
    echo "== cap $side round $round at $(el): $(grep -E '^\| (64|128) ' $OUT/cap_${side}_$round.txt | awk -F'|' '{print $2 $3 $4 $5}' | tr -s ' ' | tr '\n' ';')"
  done
done
cd $OUT && tar czf logs.tgz *.txt && rm -rf *.txt
