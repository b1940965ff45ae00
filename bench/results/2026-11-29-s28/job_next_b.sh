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
# Also fo64k1 / fo64k2 (hdim 64 bf16 forward units only: fo64 + fwd_fixed_offset_exp2_on_fma.patch, 1 /
# 2 of every 4 of the fixed-offset walk's exponentials on the FMA pipe, hdim 64 only). Carry them too.
# Model (a 192 x 128 tile step, 12 MMA warps, 4 SMSPs; MUFU 4 lanes a clock an SMSP; GEMMs ~1536 clocks):
#   run-time kernel today, capped: MUFU 128 a thread-step -> 3072 clocks, issue 678 -> 2034; measured
#     ~3900 clocks a tile (softcap 27-30% below plain's ~494 TFLOPS at 4k full);
#   fo64: MUFU 128 -> 3072, issue 487 -> 1461 (no max, no shuffles: the MUFU alone binds);
#   fo64k1: MUFU 112 -> 2688, issue 616 -> 1848; fo64k2: MUFU 96 -> 2304, issue 744 -> 2232.
# Prediction: tests pass (test_softcap's one-key test now at hdim 64 too); hdim 64 bf16 softcap 30 / 50
# at 2k-16k: fo64 +8-20% over main (bounded by the MUFU near +28%); fo64k1 a further +3-8%, fo64k2 a
# further +5-12% (items 51 / 107 found FMA-pipe exps slower, but with the running-max walk, whose
# issue count was the binding one); plain within noise (the same kernels).
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
echo "ab done at $(t)"
B="bench/bench_fwd.py --hdims 64 --seqlens 2048 4096 16384 --masks causal full --softcap 30 $W"
LIBS='.ab/libs/fo64.so.gz .ab/libs/fo64k1.so.gz .ab/libs/fo64k2.so.gz' BENCH="$B" ROUNDS=2 SASS=0 OUT=$OUT/ab2 \
  bash bench/ab_job.sh 2>&1 | tail -10
echo "all done at $(t)"
