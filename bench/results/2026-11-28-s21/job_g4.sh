#!/bin/bash
# Session 21, last call: the final library (00bcf24: two_bodies at hdim 64 with the step lambda
# always_inline, so that the one-body kernels compile as before; .ab/libs/twob2.so.gz, every unit,
# built here). (1) A/B against main before the session (m4f6b), hdim 64 (the only kernels whose SASS
# changed against 4804022's report), two rounds, det and non-det. Prediction: as g3's twob (+0.4-2.0%
# causal det, full +-0.2%) within 1%: always_inline rescheduled hdim 64's loops (1434 / 1267 ->
# 1452 / 1285 instructions). (2) Bits against m4f6b (bwd_cross_lib.py, hdim 64 / 128). (3) The GPU
# test files the change touches. (4) The hdim 64 grid beside FA3. Carry .ab/libs/{m4f6b,twob2}.so.gz
# and .ab/fa3.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT/check $OUT/ab $OUT/tests
export PYTHONUNBUFFERED=1
LIBS='.ab/libs/m4f6b.so.gz .ab/libs/twob2.so.gz' SASS=0 ROUNDS=2 \
BENCH='bench/bench_bwd.py --hdim 64 --seqlen 2048 4096 16384 --mask full causal --impl dash_det dash --warm-s 1 --min-s 0.5' \
OUT=$OUT/ab bash bench/ab_job.sh
echo "A/B done at $(t)"
D=bench/results/2026-11-28-detsplit
for lib in m4f6b twob2; do
  gunzip -c .ab/libs/$lib.so.gz > dash/_C.abi3.so
  timeout 100 python3 $D/bwd_cross_lib.py save /tmp/$lib.pt > $OUT/check/cross_$lib.txt 2>&1
  echo "$lib: $(tail -1 $OUT/check/cross_$lib.txt) at $(t)"
done
python3 $D/bwd_cross_lib.py compare /tmp/m4f6b.pt /tmp/twob2.pt 2>&1 | tee $OUT/check/compare.txt | tail -3
(cd $OUT/check && tar czf ../check.tgz ./*.txt) && rm -rf $OUT/check
FILES="test_bwd_correctness test_determinism test_window test_varlen test_gqa test_invariance test_deadlock test_head_dims test_softcap" \
SASS=0 STRESS_MAX_S=10 DEADLINE=${TEST_DEADLINE:-230} OUT=$OUT/tests bash tools/gpu_test_job.sh
echo "tests done at $(t)"
PYTHONPATH=$PWD/.ab/fa3:$PYTHONPATH timeout 110 python3 bench/bench_bwd.py --hdim 64 --seqlen 2048 4096 8192 16384 \
  --mask full causal --impl dash_det dash fa3_det fa3 --warm-s 1 --min-s 0.5 --out /tmp/grid > $OUT/bwd_fa3_64.txt 2>&1
echo "grid rc=$? at $(t)"; grep -E "^ *[0-9x]+ +[0-9]+ " $OUT/bwd_fa3_64.txt
