#!/bin/bash
# Session 24, third call: hdim 64's forward with 128 x 128 tiles (two MMA warpgroups) against main's
# 192 x 128 (three), for the short causal calls where hdim 64 trails FA3 (0.89-0.96 at 512-4k).
# f64v1: only the tile changed (run-time score tests, direct epilogue, as main's hdim 64);
# f64v2: the tile plus hdim 128's choices (steps compiled per flag, staged epilogue).
# Prediction: causal 512-1k +5-10% (less diagonal waste: 80% of the computed scores are inside the
# mask at 512 against 70%), 2k +0-3%, 4k-16k -2..-6% (two warpgroups hide less latency); full
# masks slower from 2k.
OUT=${OUT:-/tmp/out}
LIBS='.ab/libs/main.so.gz .ab/libs/f64v1.so.gz .ab/libs/f64v2.so.gz' SASS=0 ROUNDS=2 \
BENCH='bench/bench_fwd.py --hdims 64 --seqlens 512 1024 2048 4096 8192 16384 --masks causal full --impls dash --warm-s 1 --min-s 0.5 --out /tmp/bf ;; bench/bench_varlen.py --pass fwd --hdim 64 --heads 32 --impl dash --warm-s 1 --min-s 0.5 --out /tmp/bv' \
TESTS='tests/test_fwd.py -k "64 and not float16"' TESTS_TIMEOUT=120 OUT=$OUT bash bench/ab_job.sh
