#!/bin/bash
# The final library of the fourteenth session (bd04191's, built by .ci/run on a clean clone on the
# CI machine, check_sass run there), through the GPU test files its changes touch, in the device
# time left: the dQ writers (every head dim's deterministic path; 192 / 192x128 / 256's shared
# buffer), the non-det rule at 192 / 192x128. Carry .ab/libs (final.so.gz).
gunzip -c .ab/libs/final.so.gz > dash/_C.abi3.so
SASS=0 DEADLINE=${DEADLINE:-230} STRESS_MAX_S=20 \
FILES="test_deadlock test_head_dims test_softcap test_determinism test_invariance test_bwd_correctness test_gqa test_varlen test_window test_library_errors" \
bash tools/gpu_test_job.sh
