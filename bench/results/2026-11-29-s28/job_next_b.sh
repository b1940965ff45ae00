#!/bin/bash
# Prepared for the next session's second call (not run): hdim 64's softcap calls on a fixed-offset
# softcap kernel (fwd_hdim64_fixed_offset.patch; library fo64, every unit, built here from main +
# the patch). hdim 64's softcap forward costs 27-30% (the worst head dim); item 207 never tried the
# fixed offset there (its kernel tests scores at run time, one step for plain and softcap calls). The
# patch gives bf16 softcap calls at hdim 64 (the 192 x 128 walk; the short walk keeps the running
# max) a kernel of their own with compiled capped steps and the fixed offset: main loop 484 / 487
# instructions (band / full) against the run-time kernel's 919 / 678; the plain kernels' SASS is
# main's; check_sass ok, no spills, no serialized WGMMAs. Carry .ab/libs/main.so.gz, .ab/libs/fo64.so.gz.
# Run after job_next.sh, from the patched tree (its tests): patch -p1 < bench/results/2026-11-29-s28/
# fwd_hdim64_fixed_offset.patch && python3 csrc/instantiations/generate.py.
# Prediction: tests pass (test_softcap's one-key test now at hdim 64 too); hdim 64 bf16 softcap 30 / 50
# at 2k-16k +5-12% (the MUFU bound: tanh + ex2 per score is twice the GEMMs' time at hdim 64, which
# caps the gain near 13% of a 27-30% cost); plain within noise (the same kernels).
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/fo64.so.gz > dash/_C.abi3.so
FILES="test_softcap test_fwd test_window test_varlen test_gqa test_invariance test_gemma2_gpu test_traits" \
  SASS=0 DEADLINE=200 STRESS_MAX_S=0 OUT=$OUT/tests bash tools/gpu_test_job.sh
echo "tests done at $(t)"
W="--warm-s 1 --min-s 0.5 --impls dash"
B="bench/bench_fwd.py --hdims 64 --seqlens 2048 4096 16384 --masks causal full --softcap 30 $W"
B="$B;;bench/bench_fwd.py --hdims 64 --seqlens 4096 --masks causal full --softcap 50 $W"
B="$B;;bench/bench_fwd.py --hdims 64 --seqlens 2048 4096 16384 --masks causal full $W"
LIBS='.ab/libs/main.so.gz .ab/libs/fo64.so.gz' BENCH="$B" ROUNDS=2 SASS=0 OUT=$OUT/ab bash bench/ab_job.sh 2>&1 | tail -20
echo "all done at $(t)"
