#!/bin/bash
# Call 5 (session 32). Carry .ab/libs/s32b.so.gz (this session's final tree, every unit: hdim 128's
# full-mask softcap backward with two bodies, hdim 96's forward on 192 x 96; check_sass ran here).
# (1) The GPU files on it (the forward's and the backward's). Prediction: pass.
# (2) hdim 96's forward beside cuDNN, 2k-16k, both masks. Prediction: 1.1-1.25x cuDNN on full masks
#     (item 39: 1.13-1.21x on 128 x 128, plus item 240's +2-7%).
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/s32b.so.gz > dash/_C.abi3.so
FILES="test_head_dims test_fwd test_softcap test_varlen test_window test_gqa test_invariance test_determinism
  test_bwd_correctness test_traits test_deadlock test_flash_attn_interface_gpu test_gemma2_gpu" SASS=0 \
  DEADLINE=330 STRESS_MAX_S=20 OUT=$OUT/tests bash tools/gpu_test_job.sh
echo "tests done at $(t)"
timeout 80 python3 bench/bench_fwd.py --hdims 96 --seqlens 2048 4096 16384 --masks full causal --impls dash cudnn \
  --warm-s 1 --min-s 0.5 > $OUT/fwd96_cudnn.txt 2>&1
echo "fwd 96 beside cuDNN rc=$? at $(t)"; grep -E "^\| 96" $OUT/fwd96_cudnn.txt
echo "all done at $(t)"
