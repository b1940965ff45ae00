#!/bin/bash
# Item 115, second call: the libraries job_l1a.sh built (carried as .ab/built/*.so.gz), base /
# variant alternately, two rounds each.
START=$(date +%s)
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
LIBS='.ab/built/base.so.gz .ab/built/lazyhd.so.gz' ROUNDS=2 \
BENCH='bench/bench_fwd.py --hdims 96 192x128 192 256 --seqlens 2048 4096 16384 --masks full causal --impls dash --warm-s 1 --min-s 0.5' \
OUT=$OUT/ab_hd timeout 330 bash bench/ab_job.sh 2>&1 | tail -28
LIBS='.ab/built/base.so.gz .ab/built/lazy64.so.gz' ROUNDS=2 \
BENCH='bench/bench_fwd.py --hdims 64 --seqlens 2048 4096 16384 --masks full causal --impls dash --warm-s 1 --min-s 0.5' \
OUT=$OUT/ab_64 timeout 150 bash bench/ab_job.sh 2>&1 | tail -10
echo "done at $(( $(date +%s) - START ))s"
