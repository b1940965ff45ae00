#!/bin/bash
# Sliding-window (4096, causal) forward at hdim 128 / 64 and the hdim 256 forward with softcap 50 (Gemma-2):
# HEAD's forward units (fwdA) against the final library, through bench/ab_job.sh's LIBS mode.
LIBS='.ab/libs/fwdA.so.gz .ab/libs/final3.so.gz' ROUNDS=2 \
BENCH='bench/bench_fwd.py --hdims 128 64 --seqlens 16384 32768 --masks causal --window 4096 --impls dash --warm-s 1 --min-s 0.5 ;; bench/bench_fwd.py --hdims 256 --seqlens 4096 16384 --masks full causal --softcap 50 --impls dash --warm-s 1 --min-s 0.5' \
bash bench/ab_job.sh
