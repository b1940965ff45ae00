#!/bin/bash
# (1) hdim 128's fixed-offset walk with part of its exponentials on the FMA pipe: main / cfix (no
# FMA exps) / fk1 (1 of every 4 columns) / fk2 (2 of 4), softcap 30 and plain, hdim 128 bf16 only.
# Prediction: cfix as job_b (softcap -1..0%, plain -2..-3%); fk1 softcap +3-6% over cfix (the fixed
# walk is 451 instructions a step against the max walk's 614, and its MUFU ops (128 a thread a step)
# take as long as the step's GEMMs); fk2 +0-4% (739 instructions); plain as cfix.
# (2) the plain forward at 96 / 192 / 192x128 / 256 and hdim 64's short walk: main vs cfix (the
# third walk's effect on the plain walk, as hdim 128's -2..-3% in job_b). Prediction: within 1%.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
W="--warm-s 1 --min-s 0.5 --impls dash"
B="bench/bench_fwd.py --hdims 128 --seqlens 2048 8192 --masks causal full --softcap 30 $W"
B="$B;;bench/bench_fwd.py --hdims 128 --seqlens 2048 8192 --masks causal full $W"
LIBS='.ab/libs/main.so.gz .ab/libs/cfix.so.gz .ab/libs/fk1.so.gz .ab/libs/fk2.so.gz' BENCH="$B" ROUNDS=2 SASS=0 \
  OUT=$OUT/ab1 bash bench/ab_job.sh 2>&1 | tail -14
B="bench/bench_fwd.py --hdims 96 192 192x128 256 --seqlens 4096 --masks causal full $W"
B="$B;;bench/bench_fwd.py --hdims 64 --seqlens 1024 --masks causal $W"
LIBS='.ab/libs/main.so.gz .ab/libs/cfix.so.gz' BENCH="$B" ROUNDS=2 SASS=0 \
  OUT=$OUT/ab2 bash bench/ab_job.sh 2>&1 | tail -12
