#!/bin/bash
# The library .ci/run built from 1428a06 (items 152-153: the group split by head dim, the
# producer's step loops not unrolled), carried as .ab/libs/final5.so.gz (check_sass run on the CI
# machine: sass_1428a06.txt), through every GPU test file (the backward's first; no stress run:
# the session's device time was short), then the new plans at their default (no DASH_KV_PARTS):
# 256, groups of 4, causal 1k / 4k, both modes.
START=$(date +%s)
gunzip -c .ab/libs/final5.so.gz > dash/_C.abi3.so
SASS=0 DEADLINE=${DEADLINE:-400} STRESS_MAX_S=5 \
FILES="test_gqa test_deadlock test_determinism test_invariance test_head_dims test_varlen test_window test_softcap
  test_bwd_correctness test_fwd test_library_errors test_flash_attn_interface_gpu test_gemma2_gpu
  test_torch_attention_integration test_transformers_integration test_distributed_gpu" \
bash tools/gpu_test_job.sh
echo "tests done at $(( $(date +%s) - START ))s"
timeout 40 python3 bench/bench_bwd.py --warm-s 1 --min-s 0.5 --out /tmp/bo --hdim 256 --hidden 4096 --heads-kv 4 \
  --seqlen 1024 4096 --mask causal --impl dash dash_det > $OUT/plan_256.txt 2>&1; echo "256 rc=$?"
grep -hE "^ *[0-9x]+ +[0-9]+ " $OUT/plan_*.txt
echo "all done at $(( $(date +%s) - START ))s"
