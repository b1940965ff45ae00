#!/bin/bash
# Call 2 (session 32). Carry .ab/libs/s32.so.gz (this session's working tree, every unit), .ab/fa3sc and
# .ab/fa3v (FlashAttention-3's hopper/ at 0251105a: softcap on / varlen on, hdim 64 / 128 bf16, built here).
# (1) The GPU files the backward change touches, on s32 (check_sass ran here: 82 / 82 ok, only the two
#     hdim 128 full softcap lines differ from f0d3ac0's). Prediction: pass.
# (2) hdim 128 softcap 30 backward beside FA3 with softcap. Prediction: det / FA3 non-det full 1.03-1.05 /
#     1.00-1.02 / 0.99-1.00 (2k / 4k / 16k; item 233's 1.023 / 0.996 / 0.979 plus call 1's +1.0-1.5%),
#     causal as item 233 (1.054 / 1.019 / 0.990).
# (3) The forward grid beside FA3's varlen build (the one session 26's grid used), hdim 64 / 128, 2k-16k,
#     both masks, then hdim 128 causal 2k / 4k beside the softcap build. Prediction: session 26's table
#     within ~1% (hdim 128 causal 0.994-1.004); beside fa3sc, causal 2k 0.96-0.97 (items 223, 233).
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/s32.so.gz > dash/_C.abi3.so
FILES="test_softcap test_bwd_correctness test_determinism test_head_dims test_gqa test_window test_varlen
  test_invariance test_deadlock test_gemma2_gpu test_flash_attn_interface_gpu" SASS=0 \
  DEADLINE=270 STRESS_MAX_S=30 OUT=$OUT/tests bash tools/gpu_test_job.sh
echo "tests done at $(t)"
PYTHONPATH=$PWD/.ab/fa3sc timeout 90 python3 bench/bench_bwd.py --hdim 128 --seqlen 2048 4096 16384 --mask full causal \
  --impl dash_det dash fa3 fa3_det --softcap 30 --warm-s 1 --min-s 0.5 > $OUT/bwd_h128_cap30.txt 2>&1
echo "bwd softcap beside fa3sc rc=$? at $(t)"; grep -E "^ +[0-9]" $OUT/bwd_h128_cap30.txt
PYTHONPATH=$PWD/.ab/fa3v timeout 150 python3 bench/bench_fwd.py --hdims 64 128 --seqlens 2048 4096 8192 16384 --masks causal full \
  --impls dash fa3 --warm-s 1 --min-s 0.5 > $OUT/fwd_fa3v.txt 2>&1
echo "fwd grid beside fa3v rc=$? at $(t)"; grep -E "^\| (64|128)" $OUT/fwd_fa3v.txt
PYTHONPATH=$PWD/.ab/fa3sc timeout 40 python3 bench/bench_fwd.py --hdims 128 --seqlens 2048 4096 --masks causal \
  --impls dash fa3 --warm-s 1 --min-s 0.5 > $OUT/fwd_fa3sc.txt 2>&1
echo "fwd beside fa3sc rc=$? at $(t)"; grep -E "^\| 128" $OUT/fwd_fa3sc.txt
echo "all done at $(t)"
