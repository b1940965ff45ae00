#!/bin/bash
# Session 46, call 2: the tail dealt longest first against item order in the same library, at
# hdim 64 / 192 / 256 causal 2k-16k (det), and 128 causal non-det (the tail dealt there too
# where diagonal runs; non-det `auto` is not diagonal, so it should not move).
set -u
export PYTHONUNBUFFERED=1
cp .ab/libs/tail.so.gz .ab/libs/itemorder.so.gz
SIDE_ENV_itemorder='DASH_TEST_ITEM_ORDER_TAIL=1' LIBS='.ab/libs/itemorder.so.gz .ab/libs/tail.so.gz' \
  SASS=0 ROUNDS=2 OUT="$OUT/ab" \
  BENCH='bench/bench_bwd.py --hdim 64 192 256 --seqlen 2048 4096 8192 16384 --mask causal --impl dash_det --warm-s 1 --min-s 0.5' \
  bash bench/ab_job.sh
