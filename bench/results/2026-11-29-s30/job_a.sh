#!/bin/bash
# Session 30, call 1: session 29's job_next.sh parts (0) and (1). Carry .ab/libs/main.so.gz (the CI
# build of a23a5cc: HEAD's kernels) and .ab/bin/wgmma_rate. Predictions: see job_next.sh in
# bench/results/2026-11-29-s29/ (tests pass as on b29; N = 8 alone <= 25% of peak; "192 + rowsum"
# 4-10% below "192" RS, "128 + rowsum" 6-14% below "128" RS).
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/main.so.gz > dash/_C.abi3.so
timeout 90 .ab/bin/wgmma_rate > $OUT/wgmma_rate.txt 2>&1; echo "wgmma_rate rc=$? at $(t)"
grep -E "^\| +(8|128|192)" $OUT/wgmma_rate.txt
FILES="test_softcap test_fwd test_bwd_correctness test_determinism test_head_dims test_varlen test_window test_gqa
  test_invariance test_deadlock test_flash_attn_interface_gpu test_traits" SASS=0 DEADLINE=420 STRESS_MAX_S=0 \
  OUT=$OUT/tests bash tools/gpu_test_job.sh
echo "tests done at $(t)"
