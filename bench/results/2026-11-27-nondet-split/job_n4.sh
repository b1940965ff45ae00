#!/bin/bash
# The non-deterministic split of query-head groups (DASH_KV_PARTS 1 / 2 / 4) at the head dims
# the trait table has no measured walk limit for: GQA with groups of 4, causal, 4k-16k tokens a
# sequence (16k a call), on new2 (job_n3's bf16 library: this tree's kernels).
START=$(date +%s)
export PYTHONUNBUFFERED=1
t() { echo "t=$(( $(date +%s)-START ))s"; }
gunzip -c .ab/libs/new2.so.gz > dash/_C.abi3.so
W="--warm-s 1 --min-s 0.5 --out /tmp/bo"
L=$OUT/sw; mkdir -p $L
for shape in "96 --hidden 3072 --heads-kv 8" "192 --hidden 3072 --heads-kv 4" "192x128 --hidden 3072 --heads-kv 4" "256 --hidden 4096 --heads-kv 4"; do
  name=${shape%% *}
  for p in 1 2 4; do
    DASH_KV_PARTS=$p timeout 100 python3 bench/bench_bwd.py $W --hdim $shape --seqlen 4096 8192 16384 --mask causal --impl dash > $L/h${name}_p$p.txt 2>&1; t
  done
done
for f in $L/*.txt; do echo "== $f"; grep -v "^#\|Warn\|warn\|wrote" $f | tail -3; done
cd $OUT && tar czf n4_logs.tgz sw && rm -rf sw
