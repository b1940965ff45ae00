#!/bin/bash
# The final library's release checks, backward-relevant files first.
gunzip -c .ab/final8.so.gz > dash/_C.abi3.so
export PYTHONPATH=$PWD
FILES="test_window test_bwd_correctness test_determinism test_deadlock test_invariance test_varlen test_gqa test_softcap
  test_head_dims test_fwd test_flash_attn_interface_gpu test_gemma2_gpu test_torch_attention_integration" \
DEADLINE=${DEADLINE:-570} bash tools/gpu_test_job.sh
