#!/bin/bash
# Forward beside FlashAttention-3 on the final library (the forward's kernels are the walk library's).
export PYTHONPATH=$PWD/.ab/fa3:$PWD PYTHONUNBUFFERED=1
gunzip -c .ab/libs/final7.so.gz > dash/_C.abi3.so
timeout 200 python3 bench/bench_fwd.py --hdims 128 64 --seqlens 2048 4096 16384 --masks full causal --impls dash fa3 --warm-s 1 --min-s 0.5 2>&1 | grep -v -i warn | tail -20
