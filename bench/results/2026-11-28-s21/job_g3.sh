#!/bin/bash
# Session 21, third call: main with two_bodies at hdim 64 (the branch two-bodies; .ab/libs/twob.so.gz,
# every unit, built here) against main before it (m4f6b, hdim 64 / 128 bf16 units). The step's
# lambda changed ptxas's schedule of the kernels that keep one body too (check_sass: hdim 128's loops
# 639 -> 630 instructions, 96 681 -> 672, 192 x 128 / 256 +1), so hdim 128 is measured as well.
# (1) A/B, two rounds, det and non-det, hdim 64 / 128, 2k / 4k / 16k, both masks. Prediction: hdim 64
# as item 171's perstep (+1.9-2.2% causal, +0.2-0.9% full det), hdim 128 within +-1%.
# (2) Bits: bwd_cross_lib.py's deterministic cases bitwise equal across the two libraries.
# (3) The hdim 64 backward grid beside FA3 (g1's, --clocks). Prediction: g1's ratios x (1): det /
# FA3 non-det causal 0.96-0.99, full 1.00-1.03. Carry .ab/libs/{m4f6b,twob}.so.gz and .ab/fa3.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT/check $OUT/ab
export PYTHONUNBUFFERED=1
LIBS='.ab/libs/m4f6b.so.gz .ab/libs/twob.so.gz' SASS=0 ROUNDS=2 \
BENCH='bench/bench_bwd.py --hdim 64 128 --seqlen 2048 4096 16384 --mask full causal --impl dash_det dash --warm-s 1 --min-s 0.5' \
OUT=$OUT/ab bash bench/ab_job.sh
echo "A/B done at $(t)"
D=bench/results/2026-11-28-detsplit
for lib in m4f6b twob; do
  gunzip -c .ab/libs/$lib.so.gz > dash/_C.abi3.so
  timeout 100 python3 $D/bwd_cross_lib.py save /tmp/$lib.pt > $OUT/check/cross_$lib.txt 2>&1
  echo "$lib: $(tail -1 $OUT/check/cross_$lib.txt) at $(t)"
done
python3 $D/bwd_cross_lib.py compare /tmp/m4f6b.pt /tmp/twob.pt 2>&1 | tee $OUT/check/compare.txt | tail -3
(cd $OUT/check && tar czf ../check.tgz ./*.txt) && rm -rf $OUT/check
PYTHONPATH=$PWD/.ab/fa3:$PYTHONPATH timeout 150 python3 bench/bench_bwd.py --hdim 64 --seqlen 2048 4096 8192 16384 \
  --mask full causal --impl dash_det dash fa3_det fa3 --warm-s 1 --min-s 0.5 --clocks --out /tmp/grid > $OUT/bwd_fa3_64.txt 2>&1
echo "grid rc=$? at $(t)"; grep -E "^ *[0-9x]+ +[0-9]+ " $OUT/bwd_fa3_64.txt
