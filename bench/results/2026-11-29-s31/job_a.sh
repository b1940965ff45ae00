#!/bin/bash
# Session 31's first call. Carry .ab/libs/main.so.gz (every unit, built here from e728ba1's sources:
# the landed kernels), .ab/libs/s64.so.gz (hdim 64 bf16 forward units and softcap backward units on
# the 128 x 128 tile the plain backward runs, producer 24 / MMA 240 registers), .ab/libs/s64d.so.gz
# (the same with D read once dP has landed in those kernels: no spill in either MMA loop).
# (0) The GPU files session 30 did not reach on the landed kernels. Prediction: pass.
# (1) s64 sanity: the hdim 64 bf16 softcap cases. Prediction: pass.
# (2) hdim 64 softcap 30 backward, s64 against main (64 x 128 softcap tiles), two rounds.
#     Why: the fold (item 224) took the fp16 derivative out of the registers, which is what kept the
#     softcap kernel off 128 x 128 (item 61); the plain kernel ran 8-10% slower on 64 x 128 (item 61).
#     check_sass (unit objects): full MMA loop 1400 instr, 0 LDL / STL; band 1577, 1 LDL a step
#     (a loop-invariant address reloaded in the dS pass); s64d: band 1570, full 1393 (?), 0 LDL / STL.
#     Prediction: +4-9% det and non-det for both, s64d within 1% of s64.
# (3) The same calls plain on main (softcap's cost).
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/main.so.gz > dash/_C.abi3.so
FILES="test_flash_attn_interface_gpu test_gemma2_gpu test_torch_attention_integration test_transformers_integration
  test_distributed_gpu test_traits test_fwd" SASS=0 DEADLINE=300 STRESS_MAX_S=0 OUT=$OUT/tests bash tools/gpu_test_job.sh
echo "tests done at $(t)"
gunzip -c .ab/libs/s64d.so.gz > dash/_C.abi3.so
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_softcap.py -k "(test_matches_reference and d64 and bf16) or (test_rows_at_either_end_of_the_cap and 64-) or (test_a_row_that_sees_one_key and 64-) or (test_bitwise_reproducible and 4097) or (test_gqa_mqa and 64-)" > $OUT/sanity_s64d.txt 2>&1
echo "s64d sanity rc=$?: $(tail -1 $OUT/sanity_s64d.txt) at $(t)"
B="bench/bench_bwd.py --hdim 64 --seqlen 2048 4096 16384 --mask full causal --impl dash_det dash --softcap 30 --warm-s 1 --min-s 0.5"
LIBS='.ab/libs/main.so.gz .ab/libs/s64.so.gz .ab/libs/s64d.so.gz' BENCH="$B" ROUNDS=2 SASS=0 OUT=$OUT/ab bash bench/ab_job.sh 2>&1 | tail -14
echo "ab done at $(t)"
gunzip -c .ab/libs/main.so.gz > dash/_C.abi3.so
timeout 100 python3 bench/bench_bwd.py --hdim 64 --seqlen 2048 4096 16384 --mask full causal --impl dash_det dash --warm-s 1 --min-s 0.5 > $OUT/plain_main.txt 2>&1
echo "plain rc=$? at $(t)"; head -9 $OUT/plain_main.txt
echo "all done at $(t)"
