#!/bin/bash
# final5 (HEAD) vs walk (the forward's KV walk as three loops with plain bounds), two rounds.
export PYTHONPATH=$PWD
LIBS='.ab/libs/final5.so.gz .ab/libs/walk.so.gz' ROUNDS=2 \
BENCH='bench/bench_fwd.py --hdims 128 64 --seqlens 2048 4096 16384 --masks full causal --impls dash --warm-s 1 --min-s 0.5 ;; bench/bench_fwd.py --hdims 128 --seqlens 16384 32768 --total-tokens 32768 --window 4096 --masks causal --impls dash --warm-s 1 --min-s 0.5 ;; bench/bench_fwd.py --hdims 96 256 --seqlens 4096 --masks causal --impls dash --warm-s 1 --min-s 0.5' \
bash bench/ab_job.sh 2>&1 | grep -v "^== \|;"
