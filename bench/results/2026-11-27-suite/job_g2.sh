#!/bin/bash
# The rest of the GPU suite on job_g1.sh's library (carry .ab/libs with head.so.gz in it).
gunzip -c .ab/libs/head.so.gz > dash/_C.abi3.so && \
FILES="test_window test_gqa test_varlen test_fwd test_flash_attn_interface_gpu test_gemma2_gpu test_torch_attention_integration test_transformers_integration test_distributed_gpu" \
DEADLINE=580 STRESS_MAX_S=30 OUT=$OUT bash tools/gpu_test_job.sh
