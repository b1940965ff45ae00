#!/bin/bash
# The forward's softcap kernels (s27: every unit, built here) against main (the CI build of 525be6d):
# (1) the forward-facing GPU test files on s27 (the backward units' SASS is main's, checked here);
# (2) A/B, two rounds: softcap 30 and plain at every head dim (4k), hdim 64's short walk (1k causal)
# and its 192 x 128 kernel (4k causal, softcap tested at run time: unchanged).
# Prediction: softcap 30 as cfix in job_b: 192 / 192x128 / 256 +2.5-5.5%, 96 +0.5-2%, 128 -1..+1%;
# plain within 1% everywhere (the plain kernels lose only the capped walk: item 205 measured that at
# hdim 128 as +0.2 / -0.7 / +0.2%); hdim 64 192 x 128 unchanged.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/s27.so.gz > dash/_C.abi3.so
FILES="test_softcap test_fwd test_traits test_head_dims test_window test_varlen test_gqa test_invariance test_gemma2_gpu test_flash_attn_interface_gpu" \
  SASS=0 DEADLINE=230 STRESS_MAX_S=0 OUT=$OUT/tests bash tools/gpu_test_job.sh
echo "tests done at $(t)"
W="--warm-s 1 --min-s 0.5 --impls dash"
B="bench/bench_fwd.py --hdims 96 128 192 192x128 256 --seqlens 4096 --masks causal full --softcap 30 $W"
B="$B;;bench/bench_fwd.py --hdims 96 128 192 192x128 256 --seqlens 4096 --masks causal full $W"
B="$B;;bench/bench_fwd.py --hdims 64 --seqlens 1024 4096 --masks causal --softcap 30 $W"
B="$B;;bench/bench_fwd.py --hdims 64 --seqlens 1024 4096 --masks causal $W"
LIBS='.ab/libs/main.so.gz .ab/libs/s27.so.gz' BENCH="$B" ROUNDS=2 SASS=0 OUT=$OUT/ab bash bench/ab_job.sh 2>&1 | tail -32
echo "all done at $(t)"
