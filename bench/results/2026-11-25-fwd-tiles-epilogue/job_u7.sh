#!/bin/bash
# README's forward table re-measured with the final library (final5): dash, cuDNN, SDPA flash.
gunzip -c .ab/libs/final5.so.gz > dash/_C.abi3.so
timeout 200 python3 bench/bench_fwd.py --hdims 128 --seqlens 4096 16384 --masks full causal --impls dash cudnn sdpa_flash --warm-s 1 --min-s 0.5 > $OUT/readme_fwd.txt 2>&1
timeout 60 python3 bench/bench_fwd.py --hdims 64 --seqlens 8192 --masks full --impls dash cudnn sdpa_flash --warm-s 1 --min-s 0.5 >> $OUT/readme_fwd.txt 2>&1
grep -E '^\|' $OUT/readme_fwd.txt
