#!/bin/bash
# sum2 = this tree's hdim 64 / 128 bf16 units: counter-dealt deterministic calls launched as
# usual (every item drawn from the counter), and the dK / dV sum kernel's loads in chunks.
# 1) a det call beside a kernel that holds 40 SMs, final3 against sum2; 2) A/B, two rounds.
START=$(date +%s)
export PYTHONUNBUFFERED=1
t() { echo "t=$(( $(date +%s)-START ))s"; }
D=bench/results/2026-11-27-gqa-parts
for side in final3 sum2; do
  gunzip -c .ab/libs/$side.so.gz > dash/_C.abi3.so
  echo "== $side"; timeout 100 python3 $D/beside.py 2>&1 | tee $OUT/beside_$side.txt; echo "beside $side rc=$? $(t)"
  timeout 100 python3 bench/kernel_breakdown.py --calls 30 --hdim 128 --hidden 4096 --heads-kv 8 --seqlen 4096 16384 --mask causal --impl dash_det > $OUT/k_$side.txt 2>&1; echo "k $side rc=$? $(t)"
done
grep -v "plan\|Warn\|warn" $OUT/k_*.txt
W="--warm-s 1 --min-s 0.5"
LIBS=".ab/libs/final3.so.gz .ab/libs/sum2.so.gz" SASS=0 ROUNDS=2 \
BENCH="bench/bench_bwd.py --hdim 128 --hidden 4096 --heads-kv 8 --seqlen 2048 4096 8192 16384 --mask full causal --impl dash_det $W ;; bench/bench_bwd.py --hdim 128 --heads-kv 1 --seqlen 4096 16384 --mask full causal --impl dash_det dash $W ;; bench/bench_bwd.py --hdim 128 --seqlen 4096 --mask causal --impl dash_det $W" \
  bash bench/ab_job.sh > $OUT/ab.txt 2>&1; echo "ab rc=$? $(t)"
tar xzf $OUT/logs.tgz -C $OUT summary.txt 2>/dev/null; cat $OUT/summary.txt
