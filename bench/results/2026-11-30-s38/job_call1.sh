#!/bin/bash
# Prepared in session 37 for the next session's first calls: three forward variants against `land` (main
# e97175c), each built with the hdim 128 bf16 forward units only (.ab/libs/*.so.gz, not committed):
#   rot4     exp/fwd-rotated4 (d5f43e6): the previous tile's O stored right after the first step's S GEMM
#            (RESULTS item 274).
#   turnfree exp/fwd-turnfree (4ff0298): a tile's first S GEMM and last P V outside the warpgroups' turn
#            ring, FlashAttention-3's order (item 275).
#   fin1     exp/fwd-finalize-early: the softmax's row statistics (LSE, 1 / sum) made while the last P V
#            runs, O normalized after it lands, FlashAttention-3's order (item 275).
#   tffin    exp/fwd-turnfree-fin1: both.
# Carry .ab/libs/land.so.gz .ab/libs/rot4.so.gz .ab/libs/turnfree.so.gz .ab/libs/fin1.so.gz
# .ab/libs/tffin.so.gz (about 23 MB).
# Predictions: rot4 as item 274 says; turnfree +0.5-2% at causal 1k-4k (a tile's start no longer waits for
# the other warpgroup's turn), within +-0.5% at 16k; fin1 +0.3-1% at causal 1k-2k (~150-250 cycles a tile
# off the finalize), within +-0.3% at 16k; tffin about the sum of the two.
# Then the winner's tests: `FILES="test_fwd test_varlen test_window test_softcap" SASS=0 DEADLINE=200
# OUT=$OUT/t bash tools/gpu_test_job.sh` with its library in dash/ (failures asking for units a partial
# build lacks are "restricted": count only the others); turnfree also test_deadlock.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
LIBS='.ab/libs/land.so.gz .ab/libs/rot4.so.gz .ab/libs/turnfree.so.gz .ab/libs/fin1.so.gz .ab/libs/tffin.so.gz' ROUNDS=2 SASS=0 \
  BENCH='bench/bench_fwd.py --hdims 128 --seqlens 1024 2048 4096 16384 --masks causal --impls dash --warm-s 1 --min-s 0.5;;bench/bench_fwd.py --hdims 128 --seqlens 2048 16384 --masks full --impls dash --warm-s 1 --min-s 0.5;;bench/bench_fwd.py --hdims 128 --hidden 4096 --heads-kv 8 --seqlens 2048 4096 --masks causal --impls dash --warm-s 1 --min-s 0.5' \
  OUT=$OUT/ab timeout 560 bash bench/ab_job.sh
