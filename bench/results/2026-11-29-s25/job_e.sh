#!/bin/bash
# Session 25, last call: the landed code (4155ec5: the forward's passed steps, the one-compare mask, the
# short-walk limit 1536) through the GPU test
# files, on the library CI built from a clean clone of it (every unit; carry it as .ab/libs/s25.so.gz).
# Forward-heavy files first; test_distributed_gpu (ran on main in job_a.sh) is left to job_next.sh.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/s25.so.gz > dash/_C.abi3.so
FILES="test_fwd test_varlen test_window test_head_dims test_invariance test_softcap test_gqa
  test_flash_attn_interface_gpu test_gemma2_gpu test_torch_attention_integration test_transformers_integration
  test_determinism test_bwd_correctness test_deadlock" SASS=0 DEADLINE=${DEADLINE:-430} STRESS_MAX_S=15 \
  OUT=$OUT bash tools/gpu_test_job.sh
