#!/bin/bash
# Deterministic calls with the query-head groups split by force (DASH_KV_PARTS 1 / 2 / 4) at
# 192, 192 x 128 and 256, groups of 4, causal, 1k-4k tokens a sequence, new2.
START=$(date +%s)
export PYTHONUNBUFFERED=1
t() { echo "t=$(( $(date +%s)-START ))s"; }
gunzip -c .ab/libs/new2.so.gz > dash/_C.abi3.so
W="--warm-s 1 --min-s 0.5 --out /tmp/bo"
L=$OUT/sw; mkdir -p $L
for shape in "192 --hidden 3072 --heads-kv 4" "192x128 --hidden 3072 --heads-kv 4" "256 --hidden 4096 --heads-kv 4"; do
  name=${shape%% *}
  for p in 1 2 4; do
    DASH_KV_PARTS=$p timeout 100 python3 bench/bench_bwd.py $W --hdim $shape --seqlen 1024 2048 4096 --mask causal --impl dash_det > $L/h${name}_det_p$p.txt 2>&1; t
  done
done
for f in $L/*.txt; do echo "== $f"; grep -v "^#\|Warn\|warn\|wrote\|NVIDIA\|hdim" $f | tail -3; done
cd $OUT && tar czf n6_logs.tgz sw && rm -rf sw
