#!/bin/bash
# Prepared for the next session's first call (not run): on main at the end of session 25 (the CI
# build of 4155ec5, s25, every unit: main's code since the op of 706f8d4 was reverted; carry it as
# .ab/libs/main.so.gz, with .ab/libs/mask1.so.gz and FA3 as .ab/fa3v). Then re-land
# capabilities_short_walk_op.patch (706f8d4, host code, CI green, not yet run on a GPU) with the GPU
# files that call it (test_fwd, test_varlen, test_traits) on its CI build (.ab/libs/capop.so.gz).
# (1) the forward grid beside FA3 in one job (hdim 64 causal's 2k-8k with items 190-193 measured
# beside FA3 for the first time); (2) hdim 64's short-walk limit placed by measurement: main (the
# short-walk kernel up to 1536 keys) against mask1 (the same forward kernels, no short-walk unit: the
# 192 x 128 kernel at every length) at 1k-2k; (3) whatever GPU test files session 25's last call
# did not reach (test_distributed_gpu).
# Prediction: hdim 64 causal 0.99-1.00 / ~1.00 / ~1.00x FA3 at 2k / 4k / 8k; the crossover of the
# two kernels between 1.25k and 1.75k.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT/ab
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/main.so.gz > dash/_C.abi3.so
PYTHONPATH=$PWD/.ab/fa3v timeout 160 python3 bench/bench_fwd.py --hdims 64 128 --seqlens 512 1024 2048 4096 8192 16384 \
  --masks causal full --impls dash fa3 --warm-s 1 --min-s 0.5 --out $OUT/f > $OUT/fwd_fa3.txt 2>&1
echo "fwd grid rc=$? at $(t)"; grep -E "^\|" $OUT/fwd_fa3.txt
LIBS='.ab/libs/main.so.gz .ab/libs/mask1.so.gz' SASS=0 ROUNDS=2 \
BENCH='bench/bench_fwd.py --hdims 64 --seqlens 1024 1280 1536 1792 2048 --masks causal --impls dash --warm-s 1 --min-s 0.5 --out /tmp/bf' \
  OUT=$OUT/ab bash bench/ab_job.sh
echo "limit A/B done at $(t)"
gunzip -c .ab/libs/main.so.gz > dash/_C.abi3.so
FILES="${FILES:-test_distributed_gpu}" SASS=0 DEADLINE=$(( 560 - ($(date +%s) - START) )) STRESS_MAX_S=10 OUT=$OUT/tests bash tools/gpu_test_job.sh
