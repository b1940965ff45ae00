#!/bin/bash
# The working tree's library (the non-deterministic band split rule, item 152) built here,
# then: the hdim 64 GQA split swept on the base library (DASH_KV_PARTS), and base against new,
# two rounds, non-deterministic GQA / MQA calls (the rule) and a full-mask control.
START=$(date +%s)
export PYTHONUNBUFFERED=1
t() { echo "t=$(( $(date +%s)-START ))s"; }
OUT=$OUT bash tools/gpu_build_library.sh || { tail -40 $OUT/build.log; exit 1; }
cp $OUT/head.so.gz .ab/libs/new.so.gz; mv $OUT/head.so.gz $OUT/new.so.gz; t
L=$OUT/sw; A=$OUT/ab; mkdir -p $L $A
W="--warm-s 1 --min-s 0.5 --out /tmp/bo"
gunzip -c .ab/libs/base.so.gz > dash/_C.abi3.so
for p in 1 2 4; do DASH_KV_PARTS=$p timeout 100 python3 bench/bench_bwd.py $W --hdim 64 --hidden 4096 --heads-kv 16 --seqlen 4096 8192 16384 --mask causal --impl dash > $L/gqa64_p$p.txt 2>&1; t; done
LIBS=".ab/libs/base.so.gz .ab/libs/new.so.gz" SASS=0 ROUNDS=2 OUT=$A \
BENCH="bench/bench_bwd.py --hdim 128 --hidden 4096 --heads-kv 8 --seqlen 2048 4096 8192 16384 --mask causal --impl dash $W ;; bench/bench_bwd.py --hdim 128 --hidden 4096 --heads-kv 8 --seqlen 16384 --mask full --impl dash $W ;; bench/bench_bwd.py --hdim 128 --heads-kv 1 --seqlen 4096 16384 --mask causal --impl dash $W ;; bench/bench_bwd.py --hdim 64 --hidden 4096 --heads-kv 16 --seqlen 4096 8192 16384 --mask causal --impl dash $W" \
  bash bench/ab_job.sh > $OUT/ab.txt 2>&1; echo "ab rc=$? $(t)"
cp $A/summary.txt $OUT/ 2>/dev/null || tar xzf $A/logs.tgz -C $OUT summary.txt; cat $OUT/summary.txt
for f in $L/gqa64_p*.txt; do echo "== $f"; grep -v "^#\|Warn\|warn\|wrote" $f | tail -4; done
cd $OUT && tar czf n2_logs.tgz sw ab ab.txt && rm -rf sw ab ab.txt
