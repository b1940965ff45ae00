#!/bin/bash
# Prepared for the next session: the GPU test files q2full has not yet been through (session 36's calls 9-10
# passed test_fwd, test_varlen, test_window, test_head_dims, test_softcap, test_gqa, test_invariance,
# test_flash_attn_interface_gpu), then a short stress run. Carry .ab/libs/q2full.so.gz.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
gunzip -c .ab/libs/q2full.so.gz > dash/_C.abi3.so
FILES="test_determinism test_deadlock test_long_sequences test_bwd_correctness test_gemma2_gpu test_torch_attention_integration test_transformers_integration test_distributed_gpu" \
  STRESS_MAX_S=60 SASS=0 DEADLINE=560 OUT=$OUT/tests_rest bash tools/gpu_test_job.sh
