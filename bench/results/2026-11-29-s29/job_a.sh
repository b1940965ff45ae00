#!/bin/bash
# Session 29's landing call: the library built from the commit that lands hdim 64's fixed-offset
# softcap kernel with one of four exponentials on the FMA pipe (b29, every unit; carry
# .ab/libs/b29.so.gz and .ab/libs/main.so.gz, the CI build of 505a61c).
# (1) The GPU tests on b29 (test_distributed_gpu last: its kernels are main's but for hdim 64 softcap).
# (2) A/B main vs b29: hdim 64 softcap 30 at 2k / 4k / 16k, softcap 50 at 4k, plain 64 and 128 (the
#     same kernels: within noise).
# Prediction: tests pass; hdim 64 softcap +6-10% over main (fo64's +5-8% and k1's +1-2.4%, measured
# in job_next_b.sh); plain within noise.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/b29.so.gz > dash/_C.abi3.so
FILES="test_softcap test_fwd test_varlen test_window test_head_dims test_gqa test_invariance test_gemma2_gpu test_traits
  test_flash_attn_interface_gpu test_determinism test_bwd_correctness test_deadlock test_torch_attention_integration
  test_transformers_integration test_distributed_gpu" SASS=0 DEADLINE=${TEST_DEADLINE:-420} STRESS_MAX_S=0 OUT=$OUT/tests bash tools/gpu_test_job.sh
echo "tests done at $(t)"
W="--warm-s 1 --min-s 0.5 --impls dash"
B="bench/bench_fwd.py --hdims 64 --seqlens 2048 4096 16384 --masks causal full --softcap 30 $W"
B="$B;;bench/bench_fwd.py --hdims 64 --seqlens 4096 --masks causal full --softcap 50 $W"
B="$B;;bench/bench_fwd.py --hdims 64 --seqlens 2048 4096 16384 --masks causal full $W"
B="$B;;bench/bench_fwd.py --hdims 128 --seqlens 4096 --masks causal full $W"
LIBS='.ab/libs/main.so.gz .ab/libs/b29.so.gz' BENCH="$B" ROUNDS=2 SASS=0 OUT=$OUT/ab bash bench/ab_job.sh 2>&1 | tail -18
echo "all done at $(t)"
