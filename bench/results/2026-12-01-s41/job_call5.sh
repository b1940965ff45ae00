#!/bin/bash
# Session 41, call 5: the landed library (`land41`: every unit; 256's softcap backward kernels issue dK before dQ,
# the forward multicast limits 512 at 256, 1024 at 192 and 192 / 128) through the GPU test files and test_traits,
# most relevant first, within the session's remaining device time.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/land41.so.gz > dash/_C.abi3.so
FILES="test_head_dims test_softcap test_gemma2_gpu test_fwd test_determinism test_deadlock test_traits test_bwd_correctness
  test_window test_varlen test_gqa test_invariance test_flash_attn_interface_gpu test_torch_attention_integration
  test_transformers_integration test_long_sequences test_distributed_gpu" SASS=0 STRESS_MAX_S=0 DEADLINE=${DEADLINE:-320} OUT=$OUT/t \
  bash tools/gpu_test_job.sh
echo "tests done at $(t)"
