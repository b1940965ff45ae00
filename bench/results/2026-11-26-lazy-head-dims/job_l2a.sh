#!/bin/bash
# Item 115's final library (every unit, built on the CI machine from this commit's sources, carried
# as .ab/libs/final3.so.gz): check_sass, then the GPU test files, those the forward reaches first,
# then a stress loop with what time is left (tools/gpu_test_job.sh).
gunzip -c .ab/libs/final3.so.gz > dash/_C.abi3.so
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
FILES="test_fwd test_head_dims test_varlen test_window test_softcap test_gqa test_flash_attn_interface_gpu
  test_bwd_correctness test_determinism test_invariance test_deadlock test_gemma2_gpu test_torch_attention_integration
  test_transformers_integration test_distributed_gpu" DEADLINE=${DEADLINE:-560} bash tools/gpu_test_job.sh
