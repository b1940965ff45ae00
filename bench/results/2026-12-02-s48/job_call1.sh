#!/bin/bash
# Call 1 (session 48): the nine GPU test files session 47 did not reach on 34e9cfd's library (CI's full build),
# then session 47's prepared job_next.sh (det / non-det diagonal with and without the reversed tail, beside
# non-det auto and FA3, hdim 128 causal 8k / 16k, clocks). Carry: .ab/libs/full34e9cfd.so.gz .ab/libs/fa3c.so.gz .ab/fa3py
gunzip -c .ab/libs/full34e9cfd.so.gz > dash/_C.abi3.so
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv > "$OUT/gpu.txt"
mkdir -p "$OUT/tests"
FILES="test_fwd test_head_dims test_softcap test_long_sequences test_flash_attn_interface_gpu test_gemma2_gpu
  test_torch_attention_integration test_transformers_integration test_distributed_gpu" \
  SASS=0 DEADLINE=300 OUT=$OUT/tests bash tools/gpu_test_job.sh
mkdir -p "$OUT/bench"
OUT=$OUT/bench bash bench/results/2026-12-02-s47/job_next.sh
