#!/bin/bash
# Item 155 on the CI library of 11f2f9e (the full-mask walk limit; carried as .ab/libs/f155.so.gz):
# the GPU test files the plan change touches (test_distributed_gpu first: last job's deadline cut it
# at 81%), then an A/B against 1428a06's library (final5) in two rounds, non-det and det, full
# masks, groups of 4, at 192, 192 x 128 and hdim 128 (unchanged: the control).
START=$(date +%s)
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/f155.so.gz > /tmp/new.so
gunzip -c .ab/libs/final5.so.gz > /tmp/base.so
cp /tmp/new.so dash/_C.abi3.so
SASS=0 DEADLINE=${DEADLINE:-300} STRESS_MAX_S=0 FILES="test_distributed_gpu test_gqa test_head_dims test_determinism test_invariance" \
  OUT=$OUT/tests bash tools/gpu_test_job.sh
echo "tests done at $(( $(date +%s) - START ))s"
W="--warm-s 1 --min-s 0.5 --out /tmp/bo"
L=$OUT/ab; mkdir -p $L
nvidia-smi --query-gpu=name,power.limit --format=csv > $L/gpu.txt
for round in 1 2; do
  for lib in base new; do
    cp /tmp/$lib.so dash/_C.abi3.so
    for shape in "192 --hidden 3072 --heads-kv 4" "192x128 --hidden 3072 --heads-kv 4" "128 --hidden 4096 --heads-kv 8"; do
      name=${shape%% *}
      timeout 50 python3 bench/bench_bwd.py $W --hdim $shape --seqlen 2048 4096 16384 --mask full --impl dash dash_det > $L/r${round}_${lib}_h$name.txt 2>&1
    done
    echo "round $round $lib at $(( $(date +%s) - START ))s"
  done
done
# The round-fill lead: full masks, non-det, where 1 part leaves the last round of shift's static
# rounds part-empty at hdim 128 (Llama 32/8) and 256 (16 / 4): 3072 tokens a sequence (batch 5),
# 9216 (batch 1); DASH_KV_PARTS 1 / 2 / 4 on the base library (the same plan as new there).
cp /tmp/base.so dash/_C.abi3.so
for shape in "128 --hidden 4096 --heads-kv 8" "256 --hidden 4096 --heads-kv 4"; do
  name=${shape%% *}
  for p in 1 2 4; do
    DASH_KV_PARTS=$p timeout 40 python3 bench/bench_bwd.py $W --hdim $shape --seqlen 3072 9216 --mask full --impl dash > $L/fill_h${name}_p$p.txt 2>&1
  done
  echo "fill $name at $(( $(date +%s) - START ))s"
done
# Why the deterministic 192 full calls gain nothing from the split: the opt-in shift (staggered
# starts, static rounds) beside ascending (every walk from Q tile 0), 1 / 2 / 4 parts, 2k / 4k.
for p in 1 2 4; do
  DASH_KV_PARTS=$p timeout 40 python3 bench/bench_bwd.py $W --hdim 192 --hidden 3072 --heads-kv 4 --seqlen 2048 4096 --mask full \
    --impl dash_det dash_det:shift > $L/detshift_h192_p$p.txt 2>&1
done
echo "detshift at $(( $(date +%s) - START ))s"
cp /tmp/new.so dash/_C.abi3.so
for f in $L/*.txt; do echo "== $f"; grep -E "^ *[0-9x]+ +[0-9]+ " $f; done
echo "all done at $(( $(date +%s) - START ))s"
cd $OUT && tar czf f2_logs.tgz ab && rm -rf ab
