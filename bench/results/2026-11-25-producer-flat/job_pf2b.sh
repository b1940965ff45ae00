#!/bin/bash
# Item 110: the final library's (f40's) GPU test files, backward-relevant first; then one round of
# the three-warpgroup head dims (their producer at 32 registers runs the new loop) and hdim 128's
# softcap kernel (24) against HEAD's.
gunzip -c .ab/f40.so.gz > dash/_C.abi3.so
export PYTHONPATH=$PWD
OUT0=$OUT
FILES="test_window test_bwd_correctness test_determinism test_deadlock test_invariance test_varlen test_gqa test_softcap
  test_head_dims test_fwd test_flash_attn_interface_gpu test_gemma2_gpu test_torch_attention_integration" \
OUT=$OUT0/tests DEADLINE=${DEADLINE:-440} bash tools/gpu_test_job.sh
LIBS='.ab/base.so.gz .ab/f40.so.gz' ROUNDS=1 \
BENCH='bench/bench_bwd.py --hdim 192 192x128 --seqlen 4096 16384 --mask causal full --impl dash_det --warm-s 1 --min-s 0.5 ;; bench/bench_bwd.py --hdim 128 --seqlen 4096 16384 --mask causal full --softcap 30 --impl dash_det --warm-s 1 --min-s 0.5' \
OUT=$OUT0/ab timeout 140 bash bench/ab_job.sh
