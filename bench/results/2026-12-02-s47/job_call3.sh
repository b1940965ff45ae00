#!/bin/bash
# Call 3: the tail starts after the first grid draws (tail2: schedule.h tail_items =
# min(grid - 1, items - grid)), with the dealing readable (DASH_TEST_KEEP_TASK_COUNTER). On tail2:
# the tail / diagonal determinism tests and the dealing probe; then tail2 against 74184e5's library
# and tail2 in item order, hdim 128 det causal, few heads, GQA 8 / 2 and the grid's 16 heads.
set -u
OUT=${OUT:-/tmp/out}
gunzip -c .ab/libs/tail2.so.gz > dash/_C.abi3.so
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_determinism.py -k "tail or diagonal" > "$OUT/tests_tail2.txt" 2>&1
echo "tests rc=$?: $(tail -1 "$OUT/tests_tail2.txt")"
timeout 150 python3 bench/results/2026-12-02-s47/dealing_probe.py > "$OUT/probe.txt" 2>&1
echo "probe rc=$?"; cat "$OUT/probe.txt"
cp .ab/libs/tail2.so.gz .ab/libs/tail2order.so.gz
SIDE_ENV_tail2order='DASH_TEST_ITEM_ORDER_TAIL=1' LIBS='.ab/libs/full74184e5.so.gz .ab/libs/tail2.so.gz .ab/libs/tail2order.so.gz' SASS=0 \
ROUNDS=2 OUT=$OUT/ab \
BENCH='bench/bench_bwd.py --hdim 128 --seqlen 8192 16384 --hidden 256 --mask causal --impl dash_det --warm-s 1 --min-s 0.5 ;; bench/bench_bwd.py --hdim 128 --seqlen 8192 16384 --hidden 1024 --heads-kv 2 --mask causal --impl dash_det --warm-s 1 --min-s 0.5 ;; bench/bench_bwd.py --hdim 128 --seqlen 16384 --hidden 512 --mask causal --impl dash_det --warm-s 1 --min-s 0.5 ;; bench/bench_bwd.py --hdim 128 --seqlen 16384 --mask causal --impl dash_det --warm-s 1 --min-s 0.5' \
  bash bench/ab_job.sh
