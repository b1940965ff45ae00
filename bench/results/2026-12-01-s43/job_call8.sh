#!/bin/bash
# Session 43, call 8: hdim 256's backward on FlashAttention-3's 64 x 80 tiles (`x80`: kv_cols with two warpgroups,
# S / dP 40 keys a warpgroup, dK^T / dV^T 128 head-dim rows a warpgroup, P and dS taking one smem buffer in turn,
# the dQ GEMM in two 64-column slices; dQ still staged and added in order) against land41: its bf16 backward tests
# first (90 s at most), then both modes at 4k / 16k, full and causal, two rounds.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/x80.so.gz > dash/_C.abi3.so
K="256 and not fp16 and not float16 and not softcap and not forward and not cpu and not dtype1"
timeout 90 python3 -m pytest -q tests/test_head_dims.py tests/test_determinism.py tests/test_deadlock.py -k "$K" > $OUT/tests_x80.txt 2>&1
echo "tests rc=$? at $(t)"; tail -4 $OUT/tests_x80.txt
LIBS='.ab/libs/land41.so.gz .ab/libs/x80.so.gz' ROUNDS=2 SASS=0 \
  BENCH='bench/bench_bwd.py --hdim 256 --seqlen 4096 16384 --mask full causal --impl dash_det dash --warm-s 1 --min-s 0.5' \
  OUT=$OUT/ab timeout 200 bash bench/ab_job.sh > $OUT/ab_stdout.txt 2>&1
echo "ab rc=$? at $(t)"; grep -A12 "^| bench" $OUT/ab_stdout.txt
