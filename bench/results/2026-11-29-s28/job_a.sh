#!/bin/bash
# Session 28's first call: item 210 again, as ft3. Session 27's ft2 ran the row-sum GEMM with every
# WGMMA of the fixed-offset kernels serialized (ptxas C7515: acc_rowsum cleared where a wgmma could be
# in flight, at the join of the two walks): -31..-39% at 192 / 256. ft3 defines acc_rowsum only inside
# the fixed-offset walk (the last P V moved into each walk); check_sass now fails serialized kernels
# (ft3: 96 / 96 ok). Carry .ab/libs/main.so.gz and .ab/libs/ft3.so.gz.
# Prediction: tests pass; softcap 30 at 4k: 192 +2-4%, 192 x 128 +1-3%, 256 +3-5%; 96 / 128 within 1%;
# plain within 1% (ft2 read -1.3..-1.5% at 192 / 192 x 128 / 256 full: watch it).
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/ft3.so.gz > dash/_C.abi3.so
FILES="test_softcap test_fwd test_traits test_head_dims test_window test_varlen test_gqa test_invariance test_gemma2_gpu test_flash_attn_interface_gpu" \
  SASS=0 DEADLINE=260 STRESS_MAX_S=0 OUT=$OUT/tests bash tools/gpu_test_job.sh
echo "tests done at $(t)"
W="--warm-s 1 --min-s 0.5 --impls dash"
B="bench/bench_fwd.py --hdims 96 128 192 192x128 256 --seqlens 4096 --masks causal full --softcap 30 $W"
B="$B;;bench/bench_fwd.py --hdims 192 256 --seqlens 4096 --masks causal full --softcap 50 $W"
B="$B;;bench/bench_fwd.py --hdims 96 128 192 192x128 256 --seqlens 4096 --masks causal full $W"
LIBS='.ab/libs/main.so.gz .ab/libs/ft3.so.gz' BENCH="$B" ROUNDS=2 SASS=0 OUT=$OUT/ab bash bench/ab_job.sh 2>&1 | tail -32
echo "all done at $(t)"
