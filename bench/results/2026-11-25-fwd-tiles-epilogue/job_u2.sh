#!/bin/bash
# (1) upper bound of a cheaper forward epilogue: final3 vs vN (O stores skipped), hdim 128 / 64;
# (2) the traced hdim 128 full forward (vT): clock64 stamps of each step's phases, CTAs 0-3.
LIBS='.ab/libs/final3.so.gz .ab/libs/vN.so.gz' ROUNDS=2 \
BENCH='bench/bench_fwd.py --hdims 128 64 --seqlens 2048 4096 16384 --masks full causal --impls dash --warm-s 1 --min-s 0.5' \
bash bench/ab_job.sh
gunzip -c .ab/libs/vT.so.gz > dash/_C.abi3.so
python3 .ab/trace_fwd.py > $OUT/trace.txt 2>&1; tail -5 $OUT/trace.txt
