#!/bin/bash
# Session 38, call 2: main's library (`land`, every unit, e97175c's kernels) through the GPU test files that
# session 37 ran on q2full only, plus the varlen test added at session 37's end (not yet run on a GPU), and a
# 30 s stress run. Carry .ab/libs/land.so.gz.
OUT=${OUT:-/tmp/out}
gunzip -c .ab/libs/land.so.gz > dash/_C.abi3.so; mkdir -p $OUT/t
timeout 90 python3 -m pytest -q -p no:cacheprovider tests/test_varlen.py -k past_a_document > $OUT/t/varlen_past.txt 2>&1
tail -3 $OUT/t/varlen_past.txt
FILES="test_deadlock test_bwd_correctness test_long_sequences test_flash_attn_interface_gpu test_gemma2_gpu test_torch_attention_integration test_transformers_integration test_distributed_gpu" \
  STRESS_MAX_S=30 SASS=0 DEADLINE=480 OUT=$OUT/t bash tools/gpu_test_job.sh
cd $OUT && tar czf logs.tgz t && rm -rf t
