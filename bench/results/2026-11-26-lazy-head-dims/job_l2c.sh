#!/bin/bash
# Item 115's final library: the hdim 128 forward beside FlashAttention-3 and cuDNN, 512-16k (its
# kernels are item 114's; item 114 measured 2k-16k only).
gunzip -c .ab/libs/final3.so.gz > dash/_C.abi3.so
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/.ab/fa3:$PWD
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
timeout 200 python3 bench/bench_fwd.py --hdims 128 --seqlens 512 1024 2048 4096 8192 16384 --masks full causal \
  --impls dash fa3 cudnn --warm-s 1 --min-s 0.5 > $OUT/fwd128_fa3.txt 2>&1
grep -E "^\|" $OUT/fwd128_fa3.txt
