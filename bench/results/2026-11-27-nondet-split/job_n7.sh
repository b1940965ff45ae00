#!/bin/bash
# Full masks at 192 and 256, groups of 4: the non-deterministic split forced (DASH_KV_PARTS 1 / 2 /
# 4) beside the deterministic default, 4k and 16k tokens a sequence, new2.
START=$(date +%s)
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/new2.so.gz > dash/_C.abi3.so
W="--warm-s 1 --min-s 0.5 --out /tmp/bo"
L=$OUT/sw; mkdir -p $L
for shape in "192 --hidden 3072 --heads-kv 4" "256 --hidden 4096 --heads-kv 4"; do
  name=${shape%% *}
  for p in 1 2 4; do
    DASH_KV_PARTS=$p timeout 60 python3 bench/bench_bwd.py $W --hdim $shape --seqlen 4096 16384 --mask full --impl dash > $L/h${name}_full_p$p.txt 2>&1
  done
  timeout 60 python3 bench/bench_bwd.py $W --hdim $shape --seqlen 4096 16384 --mask full --impl dash dash_det > $L/h${name}_full_default.txt 2>&1
done
echo "done at $(( $(date +%s) - START ))s"
for f in $L/*.txt; do echo "== $f"; grep -E "^ *[0-9x]+ +[0-9]+ " $f; done
cd $OUT && tar czf n7_logs.tgz sw && rm -rf sw
