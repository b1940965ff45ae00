#!/bin/bash
# Item 114's final library (every unit, built on the CI machine; check_sass run there): the GPU test
# files the forward reaches (the backward's kernels are item 113's), then the forward beside
# FlashAttention-3 at hdim 128 / 64.
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/final2.so.gz > dash/_C.abi3.so
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
for t in test_fwd test_head_dims test_varlen test_window test_softcap test_gqa test_flash_attn_interface_gpu \
         test_bwd_correctness test_determinism test_invariance; do
  timeout 60 python3 -m pytest -q -p no:cacheprovider tests/$t.py > $OUT/$t.txt 2>&1
  echo "$t rc=$?: $(grep -E 'passed|failed|error' $OUT/$t.txt | tail -1)"
done
export PYTHONPATH=$PWD/.ab/fa3:$PWD
timeout 100 python3 bench/bench_fwd.py --hdims 128 64 --seqlens 2048 4096 16384 --masks full causal \
  --impls dash fa3 --warm-s 1 --min-s 0.5 > $OUT/fwd_fa3.txt 2>&1
grep -E "^\|" $OUT/fwd_fa3.txt
