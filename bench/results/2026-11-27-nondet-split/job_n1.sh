#!/bin/bash
# Builds the whole library on the GPU machine (this checkout has none), carries it back
# ($OUT/head.so.gz), then sweeps the query-head group split of non-deterministic calls
# (DASH_KV_PARTS) at GQA 32 / 8 and MQA 16 / 1, hdim 128, beside the default plan.
START=$(date +%s)
export PYTHONUNBUFFERED=1
t() { echo "t=$(( $(date +%s)-START ))s"; }
OUT=$OUT bash tools/gpu_build_library.sh || { tail -40 $OUT/build.log; exit 1; }
t
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv
W="--warm-s 1 --min-s 0.5 --out /tmp/bo"
B="timeout 120 python3 bench/bench_bwd.py $W --hdim 128"
L=$OUT/logs; mkdir -p $L
$B --hidden 4096 --heads-kv 8 --seqlen 2048 4096 8192 16384 --mask causal full --impl dash dash_det > $L/gqa_default.txt 2>&1; t
for p in 1 2 4; do DASH_KV_PARTS=$p $B --hidden 4096 --heads-kv 8 --seqlen 2048 4096 8192 16384 --mask causal full --impl dash > $L/gqa_p$p.txt 2>&1; t; done
$B --heads-kv 1 --seqlen 2048 4096 8192 16384 --mask causal --impl dash dash_det > $L/mqa_default.txt 2>&1; t
for p in 1 2 4 8 16; do DASH_KV_PARTS=$p $B --heads-kv 1 --seqlen 2048 4096 16384 --mask causal --impl dash > $L/mqa_p$p.txt 2>&1; t; done
grep -h "TFLOPS\|^ *[0-9]" $L/*.txt | head -5
for f in $L/*.txt; do echo "== $f"; grep -v "^#\|Warn\|warn" $f | tail -12; done
