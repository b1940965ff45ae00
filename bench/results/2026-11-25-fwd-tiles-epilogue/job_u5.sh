#!/bin/bash
# final3 (HEAD) vs final4 (item 92's tiles + item 94's staged epilogue) vs vV (final4 with each step's V wait
# after its S GEMM is issued, FA3's order); then final4 beside FA3 at hdim 128 once more.
LIBS='.ab/libs/final3.so.gz .ab/libs/final4.so.gz .ab/libs/vV.so.gz' ROUNDS=2 \
BENCH='bench/bench_fwd.py --hdims 128 64 --seqlens 2048 4096 16384 --masks full causal --impls dash --warm-s 1 --min-s 0.5' \
bash bench/ab_job.sh 2>&1 | grep -v "^== \|;"
gunzip -c .ab/libs/final4.so.gz > dash/_C.abi3.so
PYTHONPATH=$PWD/.ab/fa3:$PWD timeout 120 python3 bench/bench_fwd.py --hdims 128 --seqlens 2048 4096 8192 16384 --masks full causal --impls dash fa3 --warm-s 1 --min-s 0.5 > $OUT/fwd_fa3_again.txt 2>&1
grep -E '^\| 128 ' $OUT/fwd_fa3_again.txt
