#!/bin/bash
# Full masks, GQA, every head dim: the group split forced (DASH_KV_PARTS 1 / 2 / 4) for both
# modes in one process per part count, 2k / 4k / 16k tokens a sequence, then the default, on the
# library of 1428a06 (final5: HEAD's kernels and plan). Lead: item 152's job_n7 (192 full
# non-det +8-9% split in 4, det 192 4k +11% in 2).
START=$(date +%s)
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/final5.so.gz > dash/_C.abi3.so
W="--warm-s 1 --min-s 0.5 --out /tmp/bo"
L=$OUT/sw; mkdir -p $L
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv > $L/gpu.txt
for shape in "192 --hidden 3072 --heads-kv 4" "192x128 --hidden 3072 --heads-kv 4" "256 --hidden 4096 --heads-kv 4" \
             "128 --hidden 4096 --heads-kv 8" "96 --hidden 3072 --heads-kv 8" "64 --hidden 4096 --heads-kv 16"; do
  name=${shape%% *}
  for p in default 1 2 4; do
    if [ $p = default ]; then unset DASH_KV_PARTS; else export DASH_KV_PARTS=$p; fi
    timeout 50 python3 bench/bench_bwd.py $W --hdim $shape --seqlen 2048 4096 16384 --mask full --impl dash dash_det > $L/h${name}_full_p$p.txt 2>&1
    echo "$name $p at $(( $(date +%s) - START ))s"
  done
  unset DASH_KV_PARTS
done
echo "done at $(( $(date +%s) - START ))s"
for f in $L/h*.txt; do echo "== $f"; grep -E "^ *[0-9x]+ +[0-9]+ " $f; done
cd $OUT && tar czf f1_logs.tgz sw && rm -rf sw
