#!/bin/bash
# Prepared for the next session: q2full against fdfull (HEAD's kernels) where q2 changes a kernel besides
# hdim 128 bf16: hdim 64 (the short walk's staged epilogue at <= 1k causal; two Q buffers at 192 x 128),
# hdim 96 (192 x 96, staged epilogue: three TMA boxes of 32 columns a warp), Llama-3-8B GQA
# and the packed mixes; two rounds (bench_fwd runs bf16; fp16 is the tests' part). Carry both .so.gz.
# Prediction (session 36, item 263: hdim 128 bf16 full 1k / 2k +2.1 / +2.4%, causal flat): hdim 96 full
# +0.5-2% at 1k-4k, causal within +-0.5%; hdim 64 within +-0.5% (its main kernel keeps the direct
# epilogue; the second Q costs 24 KB of smem it has); Llama and packed within +-0.5%.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
LIBS='.ab/libs/fdfull.so.gz .ab/libs/q2full.so.gz' ROUNDS=2 SASS=0 \
  BENCH='bench/bench_fwd.py --hdims 64 96 --seqlens 512 1024 2048 4096 16384 --masks causal full --impls dash --warm-s 1 --min-s 0.5;;bench/bench_fwd.py --hdims 128 --hidden 4096 --heads-kv 8 --seqlens 2048 4096 16384 --masks causal full --impls dash --warm-s 1 --min-s 0.5;;bench/bench_varlen.py --pass fwd --mix long short --impl dash --warm-s 1 --min-s 0.5' \
  OUT=$OUT/ab timeout 560 bash bench/ab_job.sh
