#!/bin/bash
# Call 1: CI's full library of 74184e5 through every GPU test file and a short stress run.
gunzip -c .ab/libs/full74184e5.so.gz > dash/_C.abi3.so
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv > "$OUT/gpu.txt"
SASS=0 DEADLINE=560 STRESS_MAX_S=40 OUT=$OUT bash tools/gpu_test_job.sh
