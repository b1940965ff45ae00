#!/bin/bash
# The library .ci/run built from 9a53fa8 (task_ready; non-det causal auto -> diagonal where symmetric
# shift does not apply), carried as .ab/libs/final2.so.gz (check_sass run on the CI machine), through
# every GPU test file (tools/gpu_test_job.sh's list plus test_library_errors) and the stress run.
gunzip -c .ab/libs/final2.so.gz > dash/_C.abi3.so
SASS=0 DEADLINE=${DEADLINE:-560} STRESS_MAX_S=30 \
FILES="test_deadlock test_determinism test_varlen test_window test_invariance test_head_dims test_softcap test_gqa
  test_bwd_correctness test_fwd test_library_errors test_flash_attn_interface_gpu test_gemma2_gpu
  test_torch_attention_integration test_transformers_integration test_distributed_gpu" \
bash tools/gpu_test_job.sh
