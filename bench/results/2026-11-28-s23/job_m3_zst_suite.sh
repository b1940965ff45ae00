#!/bin/bash
# zero_store.patch (on top of the early postprocess, now on main) with every unit built here
# (.ab/libs/zst_full.so.gz) through the whole GPU suite: the packed, windowed, GQA, softcap and
# 96-256 deterministic calls stop zeroing dq_accum too. If it passes, land the patch.
# Carry .ab/libs/zst_full.so.gz.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT/tests
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/zst_full.so.gz > dash/_C.abi3.so
FILES="test_determinism test_varlen test_window test_gqa test_head_dims test_softcap test_invariance test_deadlock
  test_bwd_correctness test_flash_attn_interface_gpu test_torch_attention_integration test_transformers_integration
  test_gemma2_gpu test_distributed_gpu test_fwd" SASS=0 STRESS_MAX_S=15 DEADLINE=${TEST_DEADLINE:-400} \
  OUT=$OUT/tests bash tools/gpu_test_job.sh
echo "tests done at $(t)"
