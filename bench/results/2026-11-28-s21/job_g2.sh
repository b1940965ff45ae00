#!/bin/bash
# Session 21, second call: the branch step-per-mask against main (m4f6b: 4f6b186's hdim 64 / 128
# bf16 units). The step from the S wait on is compiled twice, masked and unmasked (the mask
# applied before exp2 at compile time), so each is one basic block from the S wait to the dS
# store; at hdim 64 it replaces after_ds, at 128 before_exp.
# Prediction from g1's Nsight samples (after_ds's fix-up branch keeps the dS stores after all
# the dS math: the dV-issue + fence block takes 0.89 Mcyc against FA3's 0.34 and the old hdim 64
# kernel's 0.38, while the softmax and the cross-WG wait keep item 167's gains): hdim 64 causal
# +3-6%, full +2-4%; 128 -2..+2% (item 167 saw 128 lose when its exponentials left the dP GEMM's
# shadow).
# (1) A/B, two rounds, each side its own process, det and non-det. (2) Bits: every deterministic
# case of bwd_cross_lib.py bitwise equal to main's (the visible entries' arithmetic is the old
# before_exp's), every case against the fp64 reference. Carry .ab/libs/{m4f6b,perstep}.so.gz.
START=$(date +%s)
OUT=${OUT:-/tmp/out}; mkdir -p $OUT/check $OUT/ab
export PYTHONUNBUFFERED=1
LIBS='.ab/libs/m4f6b.so.gz .ab/libs/perstep.so.gz' SASS=0 ROUNDS=2 \
BENCH='bench/bench_bwd.py --hdim 64 128 --seqlen 2048 4096 16384 --mask full causal --impl dash_det dash --warm-s 1 --min-s 0.5' \
OUT=$OUT/ab bash bench/ab_job.sh
echo "A/B done at $(( $(date +%s) - START ))s"
D=bench/results/2026-11-28-detsplit
for lib in m4f6b perstep; do
  gunzip -c .ab/libs/$lib.so.gz > dash/_C.abi3.so
  timeout 150 python3 $D/bwd_cross_lib.py save /tmp/$lib.pt > $OUT/check/cross_$lib.txt 2>&1
  echo "$lib: $(tail -1 $OUT/check/cross_$lib.txt) at $(( $(date +%s) - START ))s"
done
python3 $D/bwd_cross_lib.py compare /tmp/m4f6b.pt /tmp/perstep.pt 2>&1 | tee $OUT/check/compare.txt | tail -5
(cd $OUT/check && tar czf ../check.tgz ./*.txt) && rm -rf $OUT/check
echo "all done at $(( $(date +%s) - START ))s"
