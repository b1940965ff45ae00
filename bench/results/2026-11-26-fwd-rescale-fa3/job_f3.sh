#!/bin/bash
# Item 112's final library (every unit, built on the CI machine from this commit's sources): its GPU
# test files, check_sass and a stress loop (tools/gpu_test_job.sh), then the forward beside
# FlashAttention-3 (the peer of GPU-WORKFLOW.md, hdim 64 / 128 bf16, varlen, in .ab/fa3).
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/final.so.gz > dash/_C.abi3.so
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
mkdir -p $OUT/checks
DEADLINE=450 OUT=$OUT/checks bash tools/gpu_test_job.sh
export PYTHONPATH=$PWD/.ab/fa3:$PWD
timeout 130 python3 bench/bench_fwd.py --hdims 128 64 --seqlens 512 1024 2048 4096 8192 16384 --masks full causal \
  --impls dash fa3 --warm-s 1 --min-s 0.5 2>&1 | grep -v -i warn | grep "^|" | tee $OUT/fwd_fa3.txt
