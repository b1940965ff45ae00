#!/bin/bash
# Session 46, call 5: the fix (the dQ writer's progress count a plain store, not a release store,
# which waited for each semaphore red's acknowledgement) against main before this session (base:
# ae782f9), hdim 128 and 256 bf16 band units (+ their forwards): det causal 8k / 16k on the usual
# grid, and the fixed library with the tail in item order (fixorder), steady-state method.
set -u
export PYTHONUNBUFFERED=1
cp .ab/libs/fix.so.gz .ab/libs/fixorder.so.gz
SIDE_ENV_fixorder='DASH_TEST_ITEM_ORDER_TAIL=1' LIBS='.ab/libs/base.so.gz .ab/libs/fixorder.so.gz .ab/libs/fix.so.gz' \
  SASS=0 ROUNDS=2 OUT="$OUT/ab" \
  BENCH='bench/bench_bwd.py --hdim 128 256 --seqlen 8192 16384 --mask causal --impl dash_det --warm-s 1 --min-s 0.5' \
  bash bench/ab_job.sh
