#!/bin/bash
# Session 46, call 1: the `tail` library (diagonal's tail dealt longest first; bf16 band units of
# 64 / 128 / 192 / 256 and 128's full units) through the GPU tests that exercise the dealing,
# then the A/B at hdim 128 against main's own 128 units (main128) and the same library with the
# tail dealt in item order (itemorder: DASH_TEST_ITEM_ORDER_TAIL=1).
set -u
START=$(date +%s)
export PYTHONUNBUFFERED=1
mkdir -p "$OUT/t"
cp .ab/libs/tail.so.gz .ab/libs/itemorder.so.gz
gunzip -c .ab/libs/tail.so.gz > dash/_C.abi3.so
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
for spec in "test_determinism.py" "test_deadlock.py" "test_invariance.py" "test_window.py -k bfloat16 and not float16"; do
  f=${spec%% *}; k=${spec#* }; [ "$k" = "$spec" ] && k=""
  if [ -n "$k" ]; then timeout 170 python3 -m pytest -q -p no:cacheprovider "tests/$f" -k "${k#-k }" > "$OUT/t/${f%.py}.txt" 2>&1
  else timeout 170 python3 -m pytest -q -p no:cacheprovider "tests/$f" > "$OUT/t/${f%.py}.txt" 2>&1; fi
  echo "$f rc=$? at $(( $(date +%s) - START ))s: $(tail -1 "$OUT/t/${f%.py}.txt")"
done
(cd "$OUT/t" && tar czf ../tests.tgz ./*.txt && rm -rf "$OUT/t")
SIDE_ENV_itemorder='DASH_TEST_ITEM_ORDER_TAIL=1' LIBS='.ab/libs/main128.so.gz .ab/libs/itemorder.so.gz .ab/libs/tail.so.gz' \
  SASS=0 ROUNDS=2 OUT="$OUT/ab128" \
  BENCH='bench/bench_bwd.py --hdim 128 --seqlen 2048 4096 8192 16384 --mask causal --impl dash_det --warm-s 1 --min-s 0.5 ;; bench/bench_bwd.py --hdim 128 --seqlen 4096 16384 --mask full --impl dash_det dash --warm-s 1 --min-s 0.5' \
  bash bench/ab_job.sh
echo "done at $(( $(date +%s) - START ))s"
