#!/bin/bash
# Capped softmax with a fixed offset (bf16, softcap <= 50.6) against main, forward only: main.so.gz
# (the CI build of 525be6d) vs cfix.so.gz (the 13 bf16 forward units with the change). Then the new
# test's forward cases on cfix (test_softcap -k either_end; bf16 forward only).
# Prediction: hdim 128 softcap 30 forward +6-10% (no FMNMX a score, no quad max, no rescale);
# 96 / 192 / 256 +3-8%; hdim 64 short-walk +3-8%; plain (softcap 0) within noise.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
W="--warm-s 1 --min-s 0.5 --impls dash"
B="bench/bench_fwd.py --hdims 128 --seqlens 2048 8192 --masks causal full --softcap 30 $W"
B="$B;;bench/bench_fwd.py --hdims 128 --seqlens 4096 --masks causal full --softcap 50 $W"
B="$B;;bench/bench_fwd.py --hdims 128 --seqlens 2048 8192 --masks causal full $W"
B="$B;;bench/bench_fwd.py --hdims 96 192 192x128 256 --seqlens 4096 --masks causal full --softcap 30 $W"
B="$B;;bench/bench_fwd.py --hdims 64 --seqlens 1024 --masks causal --softcap 30 $W"
LIBS='.ab/libs/main.so.gz .ab/libs/cfix.so.gz' BENCH="$B" ROUNDS=2 SASS=0 \
  TESTS='tests/test_softcap.py -k either_end' OUT=$OUT/ab bash bench/ab_job.sh 2>&1 | tail -40
