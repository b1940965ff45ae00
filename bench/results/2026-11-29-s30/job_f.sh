#!/bin/bash
# The landed library (b30: every unit, built here from item 224's sources) through the GPU test files
# the backward change touches, then softcap's backward cost on it at 128 and 256 (256's softcap kernel
# was not in bsc's A/B). Carry .ab/libs/b30.so.gz.
# Prediction: every test passes; softcap 30's backward cost at 128 11-12% (was 12.4-13.1%, item 223),
# at 256 3-6%.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/b30.so.gz > dash/_C.abi3.so
FILES="test_softcap test_bwd_correctness test_determinism test_head_dims test_gqa test_window test_varlen
  test_invariance test_deadlock test_flash_attn_interface_gpu test_gemma2_gpu" SASS=0 DEADLINE=215 STRESS_MAX_S=0 \
  OUT=$OUT/tests bash tools/gpu_test_job.sh
echo "tests done at $(t)"
for cap in 0 30; do
  timeout 45 python3 bench/bench_bwd.py --hdim 128 256 --seqlen 16384 --mask full causal --impl dash_det dash \
    --softcap $cap --warm-s 1 --min-s 0.5 > $OUT/bwd_cap$cap.txt 2>&1; echo "bwd softcap $cap rc=$? at $(t)"
  grep -E "^ +[0-9]" $OUT/bwd_cap$cap.txt
done
echo "all done at $(t)"
