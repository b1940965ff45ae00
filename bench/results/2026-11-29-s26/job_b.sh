#!/bin/bash
# Session 26, second call. (1) The re-landed capabilities op (capabilities_short_walk_op.patch,
# 706f8d4's code) on its CI build (.ab/libs/capop.so.gz): the GPU files that ask it (test_fwd,
# test_varlen, test_traits). (2) hdim 64's short-walk crossover between job_a's 1024 (short-walk
# kernel +6%) and 1280 (192 x 128 kernel +2.4%): main (short walk up to 1536) against mask1 (no
# short-walk unit) at 1088 / 1152 / 1216 / 1280. (3) The backward beside FA3 at 8k / 16k on main
# (s25: its 24 banded backward kernels were regrouped and not timed).
# Prediction: tests pass; crossover near 1200 (the 192-row kernel's tiles are whole at 1152);
# backward within 1% of session 23's table (det / FA3 non-det: hdim 128 causal 0.976, full
# 0.994 / 0.985, hdim 64 causal 0.990 / 0.966 at 8k / 16k).
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/capop.so.gz > dash/_C.abi3.so
FILES="test_traits test_fwd test_varlen" SASS=0 DEADLINE=240 STRESS_MAX_S=0 OUT=$OUT/tests bash tools/gpu_test_job.sh
echo "tests done at $(t)"
LIBS='.ab/libs/main.so.gz .ab/libs/mask1.so.gz' SASS=0 ROUNDS=2 \
BENCH='bench/bench_fwd.py --hdims 64 --seqlens 1088 1152 1216 1280 --masks causal --impls dash --warm-s 1 --min-s 0.5 --out /tmp/bf' \
  OUT=$OUT/ab bash bench/ab_job.sh
echo "limit A/B done at $(t)"
gunzip -c .ab/libs/main.so.gz > dash/_C.abi3.so
PYTHONPATH=$PWD/.ab/fa3v timeout $(( 570 - ($(date +%s) - START) )) python3 bench/bench_bwd.py --hdim 128 64 --seqlen 8192 16384 \
  --mask causal full --impl dash_det dash fa3_det fa3 --warm-s 1 --min-s 0.5 --out $OUT/b > $OUT/bwd_fa3.txt 2>&1
echo "bwd rc=$? at $(t)"; grep -E "^\|" $OUT/bwd_fa3.txt
