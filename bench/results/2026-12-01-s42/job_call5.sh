#!/bin/bash
# Session 42, call 5: banded descending (dQ tile m adds KV tiles in ascending order, Q tiles walked from the
# last down) dealt from a counter in chunks of walks, KV tile by KV tile within a chunk (`desc`: 128 / 192 bf16
# units, descending_counter_chunks.patch; DASH_DEAL_CHUNK = walks a chunk, default all), against diagonal
# (det `auto`) and non-det, in alternating processes; descending's trace and deadlock tests on `desc`.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/desc.so.gz > dash/_C.abi3.so
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_determinism.py tests/test_deadlock.py -k "descending and not fp16 and not float16 and not 64 and not 96" > $OUT/tests.txt 2>&1
echo "tests rc=$? at $(t): $(tail -1 $OUT/tests.txt)"
B="--mask causal --warm-s 1 --min-s 0.5 --out $OUT/x"
for round in 1 2; do
  python3 bench/bench_bwd.py --hdim 128 192 --seqlen 2048 4096 8192 16384 $B --impl dash dash_det > $OUT/r${round}_ref.txt 2>&1
  echo "round $round ref at $(t)"; grep -h "^ *1[29][28] " $OUT/r${round}_ref.txt
  if [ $round = 1 ]; then CH="all 4 8 16"; else CH="8 16"; fi
  for c in $CH; do
    if [ $c = all ]; then E=""; else E="DASH_DEAL_CHUNK=$c"; fi
    env $E python3 bench/bench_bwd.py --hdim 128 192 --seqlen 2048 4096 8192 16384 $B --impl dash_det:descending > $OUT/r${round}_c$c.txt 2>&1
    echo "round $round chunk $c at $(t)"; grep -h "^ *1[29][28] " $OUT/r${round}_c$c.txt
  done
done
rm -rf $OUT/x
