#!/bin/bash
# Session 22, call 5: the final library (s22c: s22b's planner with counter_dealt_schedule's unused
# mask argument removed, every unit rebuilt; check_sass report identical to s22's) through the GPU
# test files the change touches. Carry .ab/libs/s22c.so.gz.
START=$(date +%s)
OUT=${OUT:-/tmp/out}; mkdir -p $OUT/tests
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/s22c.so.gz > dash/_C.abi3.so
FILES="test_determinism test_gqa test_bwd_correctness test_deadlock test_window test_head_dims test_softcap test_varlen test_invariance" \
SASS=0 STRESS_MAX_S=15 DEADLINE=${TEST_DEADLINE:-290} OUT=$OUT/tests bash tools/gpu_test_job.sh
echo "tests done at $(( $(date +%s) - START ))s"
