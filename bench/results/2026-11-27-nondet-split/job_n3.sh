#!/bin/bash
# The working tree's bf16 units (item 152's split rule, item 153's producer step loops not
# unrolled) built here, then base (HEAD's whole library) against new2, two rounds.
START=$(date +%s)
export PYTHONUNBUFFERED=1
t() { echo "t=$(( $(date +%s)-START ))s"; }
DASH_INSTANTIATIONS='bwd_*_bf16_*,fwd_*_bf16_*' OUT=$OUT bash tools/gpu_build_library.sh || { tail -40 $OUT/build.log; exit 1; }
cp $OUT/head.so.gz .ab/libs/new2.so.gz; mv $OUT/head.so.gz $OUT/new2.so.gz; t
W="--warm-s 1 --min-s 0.5 --out /tmp/bo"
A=$OUT/ab; mkdir -p $A
LIBS=".ab/libs/base.so.gz .ab/libs/new2.so.gz" SASS=0 ROUNDS=2 OUT=$A \
BENCH="bench/bench_bwd.py --hdim 64 128 --seqlen 4096 16384 --mask full causal --impl dash_det $W ;; bench/bench_bwd.py --hdim 192 256 --seqlen 4096 16384 --mask causal --impl dash_det $W ;; bench/bench_bwd.py --hdim 128 --seqlen 4096 --mask causal --softcap 30 --impl dash_det $W ;; bench/bench_bwd.py --hdim 128 --hidden 4096 --heads-kv 8 --seqlen 4096 16384 --mask causal --impl dash_det dash $W" \
  bash bench/ab_job.sh > $OUT/ab.txt 2>&1; echo "ab rc=$? $(t)"
tar xzf $A/logs.tgz -C $OUT summary.txt; cat $OUT/summary.txt
cd $OUT && tar czf n3_logs.tgz ab ab.txt && rm -rf ab ab.txt
