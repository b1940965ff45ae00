#!/bin/bash
# Session 40, call 4: (1) `final` (the landed tree, every unit) through the GPU test files and test_traits;
# (2) V from registers on top of the 48-wide dQ GEMM: `dq48s` (hdim 96 bf16 units, bwd_dp_v smem) against
# `dq48` (call 3's library: registers), two rounds.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/final.so.gz > dash/_C.abi3.so
FILES="test_head_dims test_softcap test_determinism test_bwd_correctness test_window test_varlen test_gqa test_deadlock test_fwd
  test_invariance test_long_sequences test_flash_attn_interface_gpu test_gemma2_gpu test_torch_attention_integration
  test_transformers_integration test_distributed_gpu test_traits" SASS=0 STRESS_MAX_S=0 DEADLINE=380 OUT=$OUT/t \
  bash tools/gpu_test_job.sh
echo "tests done at $(t)"
LIBS='.ab/libs/dq48s.so.gz .ab/libs/dq48.so.gz' ROUNDS=2 SASS=0 \
  BENCH='bench/bench_bwd.py --hdim 96 --seqlen 2048 4096 16384 --mask full causal --impl dash_det dash --warm-s 1 --min-s 0.5' \
  OUT=$OUT/ab timeout 190 bash bench/ab_job.sh > $OUT/ab_stdout.txt 2>&1
echo "ab rc=$? at $(t)"; grep -A14 "^| bench" $OUT/ab_stdout.txt
