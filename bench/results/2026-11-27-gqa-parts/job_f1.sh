#!/bin/bash
# Split query-head groups: the last part of a KV tile to finish adds the parts' dK / dV in part
# order (fold) instead of a separate sum kernel afterwards. final3 = .ci/run's build of 12729d9
# (whole library); fold = this tree's hdim 64 / 128 bf16 units (built on the CI machine).
# 1) bits: both libraries' outputs on split-group cases must be equal (same order of adds);
# 2) A/B, two rounds (job_f2.sh: tests, the split rule swept).
START=$(date +%s)
export PYTHONUNBUFFERED=1
t() { echo "t=$(( $(date +%s)-START ))s"; }
D=bench/results/2026-11-27-gqa-parts
for side in final3 fold; do
  gunzip -c .ab/libs/$side.so.gz > dash/_C.abi3.so
  timeout 90 python3 $D/bits.py $OUT/bits_$side.pt > $OUT/bits_$side.txt 2>&1; echo "bits $side rc=$? $(t)"
done
python3 $D/bits.py --compare $OUT/bits_final3.pt $OUT/bits_fold.pt > $OUT/bits_compare.txt 2>&1; tail -1 $OUT/bits_compare.txt
rm -f $OUT/bits_*.pt
W="--warm-s 1 --min-s 0.5"
LIBS=".ab/libs/final3.so.gz .ab/libs/fold.so.gz" SASS=0 ROUNDS=2 \
BENCH="bench/bench_bwd.py --hdim 128 --hidden 4096 --heads-kv 8 --seqlen 2048 4096 8192 16384 --mask full causal --impl dash_det $W ;; bench/bench_bwd.py --hdim 128 --heads-kv 1 --seqlen 4096 16384 --mask full causal --impl dash_det dash $W ;; bench/bench_bwd.py --hdim 64 --heads-kv 8 --seqlen 4096 16384 --mask full causal --impl dash_det $W ;; bench/bench_bwd.py --hdim 128 --seqlen 4096 --mask causal --impl dash_det $W" \
  bash bench/ab_job.sh > $OUT/ab.txt 2>&1; echo "ab rc=$? $(t)"
tail -40 $OUT/ab.txt
