#!/bin/bash
# Session 45, call 2: hdim 256 backward, bf16.
# 1. plain det at 2k / 4k / 8k / 16k, full and causal, two rounds, one process per library and round
#    (bench/ab_job.sh LIBS): land256 (10d173a: 64 x 64 tiles split along the head dim; bf16 units of 256),
#    x80_256 (3071e52: 64 x 80, plain kernels' dQ slices before dK^T; bf16 plain units of 256), final (every unit).
# 2. final beside FlashAttention-3 (Aug 2026 HEAD, hdim 256 bf16 only, clusters on; .ab/fa3c) in one process:
#    dash det, dash non-det, FA3 non-det (FA3 has no deterministic backward at 256).
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt 2>&1; cat $OUT/gpu.txt
gunzip -c .ab/fa3c/flash_attn_3/_C.abi3.so.gz > .ab/fa3c/flash_attn_3/_C.abi3.so
LIBS='.ab/libs/land256.so.gz .ab/libs/x80_256.so.gz .ab/libs/final.so.gz' ROUNDS=2 SASS=0 \
  BENCH='bench/bench_bwd.py --hdim 256 --seqlen 2048 4096 8192 16384 --mask full causal --impl dash_det --warm-s 1 --min-s 0.5' \
  OUT=$OUT/ab_plain timeout 340 bash bench/ab_job.sh > $OUT/ab_plain_stdout.txt 2>&1
echo "ab plain rc=$? at $(t)"; grep -A12 "^| bench" $OUT/ab_plain_stdout.txt
gunzip -c .ab/libs/final.so.gz > dash/_C.abi3.so
PYTHONPATH=$PWD/.ab/fa3c timeout 200 python3 bench/bench_bwd.py --hdim 256 --seqlen 2048 4096 8192 16384 --mask full causal \
  --impl dash_det dash fa3 --warm-s 1 --min-s 0.5 > $OUT/fa3_p1.txt 2>&1
echo "fa3 p1 rc=$? at $(t)"; tail -25 $OUT/fa3_p1.txt
