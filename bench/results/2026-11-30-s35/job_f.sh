#!/bin/bash
# Call 6 (session 35): Llama-3-8B's GQA causal forward, ci33 (the tile's-start draw) against fdfull (the
# late draw, ecf269b), two rounds, each process alone: call 5 read Llama causal 4k at 0.993x FA3 where
# item 206 read 1.038. Carry both .so.gz.
# Prediction: the late draw is no slower there (within +-1% at 2k / 4k, +1% at 16k); the move against
# item 206 is the machine and the process.
LIBS='.ab/libs/ci33.so.gz .ab/libs/fdfull.so.gz' ROUNDS=2 SASS=0 \
  BENCH='bench/bench_fwd.py --hdims 128 --hidden 4096 --heads-kv 8 --seqlens 2048 4096 16384 --masks causal --impls dash --warm-s 1 --min-s 0.5' \
  OUT=$OUT/ab timeout 200 bash bench/ab_job.sh
