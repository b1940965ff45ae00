#!/bin/bash
# Session 41, call 2: hdim 256 with its dQ partials handed over in halves (`h2`, trait bwd_dq_staging), so Q gets a second
# stage, against `final` (session 40's landed library), two rounds, both
# modes, plain and softcap 30; hdim 256's bf16 GPU tests on h2.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
LIBS='.ab/libs/final.so.gz .ab/libs/h2.so.gz' ROUNDS=2 SASS=0 TESTS_TIMEOUT=200 \
  TESTS='tests/test_head_dims.py tests/test_deadlock.py -k "not fp16 and not float16 and 256"' \
  BENCH='bench/bench_bwd.py --hdim 256 --seqlen 2048 4096 16384 --mask full causal --impl dash_det dash --warm-s 1 --min-s 0.5;;bench/bench_bwd.py --hdim 256 --seqlen 4096 16384 --mask full causal --impl dash_det --softcap 30 --warm-s 1 --min-s 0.5' \
  OUT=$OUT/ab timeout 560 bash bench/ab_job.sh > $OUT/ab_stdout.txt 2>&1
echo "ab rc=$? at $(t)"; grep -A30 "^| bench" $OUT/ab_stdout.txt; grep "tests rc" $OUT/ab_stdout.txt; tail -3 $OUT/ab/tests_*.txt 2>/dev/null
