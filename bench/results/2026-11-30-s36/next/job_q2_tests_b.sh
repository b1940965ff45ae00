#!/bin/bash
# Prepared for the next session: part 2 of 2 of q2full's GPU test files, then a short stress run.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
gunzip -c .ab/libs/q2full.so.gz > dash/_C.abi3.so
FILES="test_determinism test_deadlock test_bwd_correctness test_flash_attn_interface_gpu test_gemma2_gpu test_torch_attention_integration test_transformers_integration test_distributed_gpu" \
  STRESS_MAX_S=60 SASS=0 DEADLINE=560 OUT=$OUT/tests_b bash tools/gpu_test_job.sh
