#!/bin/bash
# Session 44, call 1: branch `x80` (hdim 256's backward on 64 x 80 tiles, RESULTS item 308) before its merge:
# x80full (every unit of the branch, built here) through every GPU test file and test_traits (session 43's
# job_next_x80.sh ran the hdim 256 subset only; the whole suite also runs Gemma-2's 256 through the doors).
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt 2>&1; cat $OUT/gpu.txt
gunzip -c .ab/libs/x80full.so.gz > dash/_C.abi3.so
FILES="test_head_dims test_softcap test_determinism test_deadlock test_bwd_correctness test_window test_varlen test_gqa test_fwd
  test_invariance test_long_sequences test_flash_attn_interface_gpu test_gemma2_gpu test_torch_attention_integration
  test_transformers_integration test_distributed_gpu test_traits" SASS=0 STRESS_MAX_S=0 DEADLINE=540 OUT=$OUT/t \
  bash tools/gpu_test_job.sh
echo "tests done at $(t)"
