#!/bin/bash
# Item 115's final library beside FlashAttention-3 (upstream hopper/, built as a peer, carried as
# .ab/fa3) and cuDNN: the forward at hdim 64, 512-16k, and at 96, 192 / 128, 192, 256, 2k-16k (hdim 128's
# forward is item 114's); then test_distributed_gpu, which job_l2a.sh's deadline cut.
gunzip -c .ab/libs/final3.so.gz > dash/_C.abi3.so
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/.ab/fa3:$PWD
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
timeout 150 python3 bench/bench_fwd.py --hdims 64 --seqlens 512 1024 2048 4096 8192 16384 --masks full causal \
  --impls dash fa3 cudnn --warm-s 1 --min-s 0.5 > $OUT/fwd_fa3.txt 2>&1
grep -E "^\|" $OUT/fwd_fa3.txt
timeout 200 python3 bench/bench_fwd.py --hdims 96 192x128 192 256 --seqlens 2048 4096 16384 --masks full causal \
  --impls dash cudnn --warm-s 1 --min-s 0.5 > $OUT/fwd_hd_cudnn.txt 2>&1
grep -E "^\|" $OUT/fwd_hd_cudnn.txt
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/test_distributed_gpu.py > $OUT/test_distributed_gpu.txt 2>&1
echo "test_distributed_gpu rc=$?: $(tail -1 $OUT/test_distributed_gpu.txt)"
