#!/bin/bash
# Forward A/B: HEAD (fwdA: bf16 forward units) against steps compiled per (mask, softcap) flag (fwdB).
# Round 1/2 alternate; then FA3 beside B. Logs under $OUT.
START=$(date +%s)
export PYTHONUNBUFFERED=1
el() { echo "$(( $(date +%s)-START ))s"; }
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
B1='bench/bench_fwd.py --hdims 128 64 --seqlens 2048 4096 16384 --masks full causal --impls dash --warm-s 1 --min-s 0.5'
for round in 1 2; do
  for side in fwdA fwdB; do
    gunzip -c .ab/libs/$side.so.gz > dash/_C.abi3.so
    timeout 120 python3 $B1 > $OUT/f1_${side}_$round.txt 2>&1
    echo "== $side round $round at $(el): $(grep -E '^\| (64|128) ' $OUT/f1_${side}_$round.txt | awk -F'|' '{print $2 $3 $4 $5}' | tr -s ' ' | tr '\n' ';')"
  done
done
# FA3 beside B
gunzip -c .ab/libs/fwdB.so.gz > dash/_C.abi3.so
PYTHONPATH=$PWD/.ab/fa3:$PWD timeout 200 python3 bench/bench_fwd.py --hdims 128 64 --seqlens 2048 4096 8192 16384 --masks full causal --impls dash fa3 --warm-s 1 --min-s 0.5 > $OUT/fa3_B.txt 2>&1
echo "== fa3 at $(el)"; grep -E '^\|' $OUT/fa3_B.txt
# quick correctness on B (bf16 forward only in this library)
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_fwd.py -x -k "bfloat16 or bf16" > $OUT/tests_B.txt 2>&1; echo "tests: $(tail -1 $OUT/tests_B.txt) at $(el)"
cd $OUT && tar czf logs.tgz *.txt && rm -rf *.txt
