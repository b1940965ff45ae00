#!/bin/bash
# Call 2 (session 33). Carry .ab/libs/s32b.so.gz (6652c11's library) and .ab/libs/s33.so.gz (this session's tree:
# b1b211c's one "bwd_softcap" block, which changes only comments in the generated header, and hdim 96's bf16
# softcap calls on a fixed-offset kernel of their own: every unit rebuilt here; check_sass ran here).
# (1) The GPU files on s33. Prediction: pass (the new kernels are call 1's v96fo units).
# (2) A/B s32b / s33, hdim 96 plain and softcap 30, 2k / 4k / 16k, both masks, two rounds. Prediction: plain
#     within +-1% (the same kernels), softcap +4-8% (call 1's v96fo); softcap's cost at 96 from 16-19% to 10-15%.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
gunzip -c .ab/libs/s33.so.gz > dash/_C.abi3.so
FILES="test_softcap test_head_dims test_fwd test_varlen test_window test_gqa test_invariance test_determinism
  test_bwd_correctness test_traits test_deadlock test_flash_attn_interface_gpu test_gemma2_gpu" SASS=0 \
  DEADLINE=330 STRESS_MAX_S=15 OUT=$OUT/tests bash tools/gpu_test_job.sh
echo "tests done at $(t)"
LIBS='.ab/libs/s32b.so.gz .ab/libs/s33.so.gz' \
  BENCH='bench/bench_fwd.py --hdims 96 --seqlens 2048 4096 16384 --masks causal full --impls dash --warm-s 1 --min-s 0.5;;bench/bench_fwd.py --hdims 96 --seqlens 2048 4096 16384 --masks causal full --impls dash --softcap 30 --warm-s 1 --min-s 0.5' \
  ROUNDS=2 SASS=0 OUT=$OUT/ab bash bench/ab_job.sh > $OUT/ab.log 2>&1
echo "ab rc=$? at $(t)"; cat $OUT/ab/summary.txt 2>/dev/null || tail -20 $OUT/ab.log
echo "all done at $(t)"
