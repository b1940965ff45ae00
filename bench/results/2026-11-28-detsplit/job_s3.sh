#!/bin/bash
# RESULTS item 167: the branch step-one-block (the backward step's softmax-to-dS block without the
# masked branch; hidden entries zeroed after dS) against main's kernels (cb47de3). Its library holds
# bwd hdim 64 / 128 bf16 full and band only (.ab/libs/sob2.so.gz, built here from c4f4a97: hidden entries zeroed in the 16-bit fragments; the first form, zeroing fp32, spilled at hdim 64: sass_sob1.txt). (1) Its bits: every
# deterministic case of bwd_cross_lib.py bitwise equal to cb47de3's, every case (det and non-det)
# against the fp64 reference, and test_bwd_correctness's bf16 cases. (2) A/B, two rounds, hdim 64 /
# 128 MHA, 2k / 4k / 16k, both masks, det and non-det in each process. Prediction (item 167): hdim 64
# causal +2-4%, 128 causal +1-3%, full +0-3%. Carry .ab/libs/cb47de3.so.gz and .ab/libs/sob2.so.gz.
START=$(date +%s)
OUT=${OUT:-/tmp/out}; mkdir -p $OUT/check $OUT/ab
export PYTHONUNBUFFERED=1
D=bench/results/2026-11-28-detsplit
for lib in cb47de3 sob2; do
  gunzip -c .ab/libs/$lib.so.gz > dash/_C.abi3.so
  timeout 240 python3 $D/bwd_cross_lib.py save /tmp/$lib.pt > $OUT/check/cross_$lib.txt 2>&1
  echo "$lib: $(tail -1 $OUT/check/cross_$lib.txt) at $(( $(date +%s) - START ))s"
done
python3 $D/bwd_cross_lib.py compare /tmp/cb47de3.pt /tmp/sob2.pt 2>&1 | tee $OUT/check/compare.txt | tail -5
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_bwd_correctness.py -k bf16 > $OUT/check/test_bwd_correctness.txt 2>&1
echo "sob test_bwd_correctness bf16: $(tail -1 $OUT/check/test_bwd_correctness.txt) at $(( $(date +%s) - START ))s"
(cd $OUT/check && tar czf ../check.tgz ./*.txt) && rm -rf $OUT/check
LIBS='.ab/libs/cb47de3.so.gz .ab/libs/sob2.so.gz' SASS=0 ROUNDS=2 \
BENCH='bench/bench_bwd.py --hdim 64 128 --seqlen 2048 4096 16384 --mask full causal --impl dash_det dash --warm-s 1 --min-s 0.5' \
OUT=$OUT/ab bash bench/ab_job.sh
echo "all done at $(( $(date +%s) - START ))s"
