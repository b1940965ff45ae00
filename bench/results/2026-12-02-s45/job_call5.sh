#!/bin/bash
# Session 45, call 5: the library of main's last kernel commit (b44b4b2, the head-dim split removed; CI's build of it,
# whose 208 kernel functions match call 1's instruction for instruction) through the backward's GPU test files.
START=$(date +%s)
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,power.limit --format=csv > $OUT/gpu.txt 2>&1; cat $OUT/gpu.txt
gunzip -c .ab/libs/nohd.so.gz > dash/_C.abi3.so
FILES="test_head_dims test_determinism test_deadlock test_bwd_correctness test_softcap
  test_traits" SASS=0 STRESS_MAX_S=0 DEADLINE=240 OUT=$OUT/t bash tools/gpu_test_job.sh
echo "tests done at $(( $(date +%s) - START ))s"
