#!/bin/bash
# Call 2 (session 35): A/B of the forward's late tile draw. ci33 (HEAD's kernels) against fd1
# (exp/fwd-draw-late: hdim 64 / 128 bf16 forward units only). Carry both .so.gz.
# Prediction: causal +1-2% with 4 heads at 16k-32k (item 252: 3.2% idle tail), +0.5-1.5% on the grid's
# causal points and the packed mixes, full masks unchanged (not counter-dealt).
LIBS='.ab/libs/ci33.so.gz .ab/libs/fd1.so.gz' ROUNDS=2 SASS=0 \
  TESTS='tests/test_fwd.py -k "matches_reference and bf16 and (64- or 128-)"' \
  BENCH='bench/bench_fwd.py --hdims 64 128 --seqlens 512 1024 2048 4096 8192 16384 --masks causal --impls dash --warm-s 1 --min-s 0.5;;bench/bench_fwd.py --hdims 128 --hidden 512 --total-tokens 32768 --seqlens 16384 32768 --masks causal full --impls dash --warm-s 1 --min-s 0.5;;bench/bench_varlen.py --pass fwd --mix long short --impl dash --warm-s 1 --min-s 0.5' \
  OUT=$OUT/ab bash bench/ab_job.sh
