#!/bin/bash
# Session 43, call 3: PyTorch's flash-attention door (SDPA's flash backend, varlen_attn) on every head dim with a
# backward (DOOR_HEAD_DIMS: 64, 96, 128, 192, 256), on land41 (main's kernels): the whole integration file.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/land41.so.gz > dash/_C.abi3.so
timeout 400 python3 -m pytest -q -rs tests/test_torch_attention_integration.py > $OUT/tests_door.txt 2>&1
echo "tests rc=$? at $(t)"; tail -15 $OUT/tests_door.txt
