#!/bin/bash
# Session 39, call 8: the library to land (every unit, built here from the working tree: K / V multicast at 96,
# 128, 192, 192 / 128 and 256, their softcap kernels too), through the GPU test files the forward touches first,
# then the rest in the time left (tools/gpu_test_job.sh; check_sass ran on the CPU machine). Carry
# .ab/libs/final.so.gz.
START=$(date +%s)
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
gunzip -c .ab/libs/final.so.gz > dash/_C.abi3.so
FILES="test_fwd test_head_dims test_softcap test_gqa test_invariance test_varlen test_window test_determinism test_traits
  test_deadlock test_flash_attn_interface_gpu test_long_sequences test_gemma2_gpu test_bwd_correctness
  test_torch_attention_integration test_transformers_integration test_distributed_gpu" \
  SASS=0 STRESS_MAX_S=0 DEADLINE=${DEADLINE:-370} OUT=$OUT/t bash tools/gpu_test_job.sh
