#!/bin/bash
# Session 41, call 4: past the KV-row split (192, 256: P and dS in smem, ready at one barrier) the dQ GEMM issued
# before the dV GEMM, so each step's dQ partial reaches its writer one GEMM earlier (`dq1`), against `final`
# (session 40's landed library), two rounds, both modes; hdim 192 / 256 bf16 GPU tests on dq1.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
LIBS='.ab/libs/final.so.gz .ab/libs/dq1.so.gz' ROUNDS=2 SASS=0 TESTS_TIMEOUT=200 \
  TESTS='tests/test_head_dims.py tests/test_deadlock.py -k "not fp16 and not float16 and (hd256 or (hd192 and not hd192x128) or 256-256 or 192-192)"' \
  BENCH='bench/bench_bwd.py --hdim 256 --seqlen 2048 4096 16384 --mask full causal --impl dash_det dash --warm-s 1 --min-s 0.5;;bench/bench_bwd.py --hdim 192 --seqlen 4096 16384 --mask full causal --impl dash_det dash --warm-s 1 --min-s 0.5;;bench/bench_bwd.py --hdim 256 192 --seqlen 16384 --mask full causal --impl dash_det --softcap 30 --warm-s 1 --min-s 0.5' \
  OUT=$OUT/ab timeout 560 bash bench/ab_job.sh > $OUT/ab_stdout.txt 2>&1
echo "ab rc=$? at $(t)"; grep -A40 "^| bench" $OUT/ab_stdout.txt; grep "tests rc" $OUT/ab_stdout.txt
