#!/bin/bash
# Session 46, call 3: the tail dealt longest first (tail) against item order (itemorder, same
# library, DASH_TEST_ITEM_ORDER_TAIL=1), steady-state method, with SM clock / board power sampled
# (--clocks): hdim 128 causal with 2 / 4 / 8 / 16 heads at 16k (batch 1) and 8k; hdim 64 / 192 /
# 256 causal at 8k / 16k on the usual grid (det only: non-det `auto` is not diagonal).
set -u
export PYTHONUNBUFFERED=1
cp .ab/libs/tail.so.gz .ab/libs/itemorder.so.gz
B='--mask causal --impl dash_det --warm-s 1 --min-s 0.5 --clocks'
SIDE_ENV_itemorder='DASH_TEST_ITEM_ORDER_TAIL=1' LIBS='.ab/libs/itemorder.so.gz .ab/libs/tail.so.gz' \
  SASS=0 ROUNDS=2 OUT="$OUT/ab" \
  BENCH="bench/bench_bwd.py --hdim 128 --seqlen 8192 16384 --hidden 256 $B ;; bench/bench_bwd.py --hdim 128 --seqlen 8192 16384 --hidden 512 $B ;; bench/bench_bwd.py --hdim 128 --seqlen 8192 16384 --hidden 1024 $B ;; bench/bench_bwd.py --hdim 128 --seqlen 16384 $B ;; bench/bench_bwd.py --hdim 64 192 256 --seqlen 8192 16384 $B" \
  bash bench/ab_job.sh
