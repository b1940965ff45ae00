#!/bin/bash
# Session 37, call 5: the forward loop rotated by a tile's epilogue (`rot3`, branch exp/fwd-rotated2: tile
# t's first S GEMM issued, then tile t-1's O stored, then tile t walked; O normalized and converted to 16
# bits at the end of its walk so nothing a GEMM defined is carried across the loop's back edge) against
# `land` (main). rot3 has the hdim 128 bf16 forward units only. Carry .ab/libs/land.so.gz .ab/libs/rot3.so.gz.
# Prediction: hdim 128 causal 2k / 4k +1-2%, full 1k-2k +0.5-1.5%, 16k within +-0.5%; Llama causal like
# MHA causal; packed mixes +0.5-1.5% (short tiles).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
LIBS='.ab/libs/land.so.gz .ab/libs/rot3.so.gz' ROUNDS=3 SASS=0 \
  TESTS='tests/test_fwd.py tests/test_varlen.py tests/test_window.py' TESTS_TIMEOUT=120 \
  BENCH='bench/bench_fwd.py --hdims 128 --seqlens 1024 2048 4096 8192 16384 --masks causal full --impls dash --warm-s 1 --min-s 0.5;;bench/bench_fwd.py --hdims 128 --hidden 4096 --heads-kv 8 --seqlens 2048 4096 16384 --masks causal --impls dash --warm-s 1 --min-s 0.5;;bench/bench_varlen.py --pass fwd --mix long short --impl dash --warm-s 1 --min-s 0.5' \
  OUT=$OUT/ab timeout 540 bash bench/ab_job.sh
