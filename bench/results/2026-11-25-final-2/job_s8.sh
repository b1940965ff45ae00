#!/bin/bash
# Backward A/B at hdim 64 / 128 det (HEAD's units against the final library), two rounds; then the final
# forward at hdim 128 / 64 beside FlashAttention-3 (2k-16k, both masks).
START=$(date +%s)
export PYTHONUNBUFFERED=1
el() { echo "$(( $(date +%s)-START ))s"; }
BB='bench/bench_bwd.py --hdim 64 128 --seqlen 4096 16384 --mask full causal --impl dash_det --warm-s 1 --min-s 0.5'
for round in 1 2; do
  for side in bwd_head final; do
    gunzip -c .ab/libs/$side.so.gz > dash/_C.abi3.so
    timeout 100 python3 $BB > $OUT/bwd_${side}_$round.txt 2>&1
    echo "== $side round $round at $(el): $(grep -E '^ *(64|128) ' $OUT/bwd_${side}_$round.txt | tr -s ' ' | tr '\n' ';')"
  done
done
gunzip -c .ab/libs/final.so.gz > dash/_C.abi3.so
PYTHONPATH=$PWD/.ab/fa3:$PWD timeout 200 python3 bench/bench_fwd.py --hdims 128 64 --seqlens 2048 4096 8192 16384 --masks full causal --impls dash fa3 --warm-s 1 --min-s 0.5 > $OUT/fwd_fa3.txt 2>&1
echo "fwd vs fa3 rc=$? at $(el)"; grep -E '^\| (64|128) ' $OUT/fwd_fa3.txt
cd $OUT && tar czf logs.tgz *.txt && rm -f *.txt
