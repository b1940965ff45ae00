#!/bin/bash
# Session 46, call 7: hdim 256 causal 8k / 16k det, base (ae782f9) against `poll` with the tail in
# item order (pollorder: DASH_TEST_ITEM_ORDER_TAIL=1) and dealt longest first (poll): is call 6's
# 256 loss the tail's dealing or the code's presence? Steady state, two rounds.
set -u
export PYTHONUNBUFFERED=1
cp .ab/libs/poll.so.gz .ab/libs/pollorder.so.gz
SIDE_ENV_pollorder='DASH_TEST_ITEM_ORDER_TAIL=1' LIBS='.ab/libs/base.so.gz .ab/libs/pollorder.so.gz .ab/libs/poll.so.gz' \
  SASS=0 ROUNDS=2 OUT="$OUT/ab" \
  BENCH='bench/bench_bwd.py --hdim 256 --seqlen 8192 16384 --mask causal --impl dash_det --warm-s 1 --min-s 0.5' \
  bash bench/ab_job.sh
