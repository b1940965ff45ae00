#!/bin/bash
# Backward A/B, hdim 64 / 128 det: HEAD (bwd_head: local build of the hdim 64 / 128 bf16 units) against the
# task_read fix (lib_fix, the whole library); forward hdim 128 A/B: HEAD's O rescale order (fwd_head) against
# the rescale before P V (fwd_fix). Alternately, two rounds.
START=$(date +%s)
export PYTHONUNBUFFERED=1
el() { echo "$(( $(date +%s)-START ))s"; }
BB='bench/bench_bwd.py --hdim 64 128 --seqlen 4096 16384 --mask full causal --impl dash_det --warm-s 1 --min-s 0.5'
B='bench/bench_fwd.py --hdims 128 --seqlens 2048 4096 16384 --masks full causal --impls dash --warm-s 1 --min-s 0.5'
for round in 1 2; do
  for side in bwd_head lib_fix; do
    gunzip -c .ab/libs/$side.so.gz > dash/_C.abi3.so
    timeout 100 python3 $BB > $OUT/bwd_${side}_$round.txt 2>&1
    echo "== $side round $round at $(el): $(grep -E '^ *(64|128) ' $OUT/bwd_${side}_$round.txt | tr -s ' ' | tr '\n' ';')"
  done
  for side in fwd_head fwd_fix; do
    gunzip -c .ab/libs/$side.so.gz > dash/_C.abi3.so
    timeout 100 python3 $B > $OUT/fwd_${side}_$round.txt 2>&1
    echo "== $side round $round at $(el): $(grep -E '^\| 128' $OUT/fwd_${side}_$round.txt | tr -s ' ' | tr '\n' ';')"
  done
done
cd $OUT && tar czf logs.tgz *.txt && rm -rf *.txt
