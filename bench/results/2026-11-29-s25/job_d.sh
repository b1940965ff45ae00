#!/bin/bash
# Session 25, fourth call: the forward producer's first K of a tile issued before Q waits for the
# previous tile (FlashAttention-3's order; fwd_k_before_q.patch on top of the passed steps). Nsight
# (job_c.sh) had dash's hdim 64 causal MMA warps waiting on K / V / Q full barriers ~1.8x as often as
# FA3's (1,503 vs ~590 stall samples at 2k). Sides: main (landed library), pass (9c934d9's band units),
# kfirst (pass + the patch; hdim 64 / 128 bf16 forward units, both masks). Then test_fwd's bf16 tests
# on kfirst.
# Prediction: kfirst +0.5-1.5% at hdim 64 2k-4k (causal more: shorter tiles, more tile starts),
# within noise at 16k and at hdim 128.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT/ab
export PYTHONUNBUFFERED=1
LIBS='.ab/libs/main.so.gz .ab/libs/pass.so.gz .ab/libs/kfirst.so.gz' SASS=0 ROUNDS=2 \
BENCH='bench/bench_fwd.py --hdims 64 --seqlens 2048 4096 8192 16384 --masks causal --impls dash --warm-s 1 --min-s 0.5 --out /tmp/bf ;; bench/bench_fwd.py --hdims 64 128 --seqlens 2048 16384 --masks full --impls dash --warm-s 1 --min-s 0.5 --out /tmp/bf ;; bench/bench_fwd.py --hdims 128 --seqlens 2048 16384 --masks causal --impls dash --warm-s 1 --min-s 0.5 --out /tmp/bf' \
TESTS='tests/test_fwd.py -k "bf16"' TESTS_TIMEOUT=100 OUT=$OUT/ab bash bench/ab_job.sh
echo "ab done at $(t)"
mkdir -p /tmp/abx && tar xzf $OUT/ab/logs.tgz -C /tmp/abx && tail -3 /tmp/abx/tests_*.txt
