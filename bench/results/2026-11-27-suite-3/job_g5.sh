#!/bin/bash
# The library .ci/run built from 12729d9 (the last commit touching code: 9a53fa8 plus the planner's
# dead fallback branch removed), carried as .ab/libs/final3.so.gz (check_sass run on the CI machine:
# sass_12729d9.txt, 72 / 72 ok), through every GPU test file (tools/gpu_test_job.sh's list plus
# test_library_errors) and the stress run.
gunzip -c .ab/libs/final3.so.gz > dash/_C.abi3.so
SASS=0 DEADLINE=${DEADLINE:-560} STRESS_MAX_S=30 \
FILES="test_deadlock test_determinism test_varlen test_window test_invariance test_head_dims test_softcap test_gqa
  test_bwd_correctness test_fwd test_library_errors test_flash_attn_interface_gpu test_gemma2_gpu
  test_torch_attention_integration test_transformers_integration test_distributed_gpu" \
bash tools/gpu_test_job.sh
