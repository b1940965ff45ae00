#!/bin/bash
# Prepared for the next session: the q2 candidate (branch exp/fwd-q2: two Q buffers where they fit, the
# staged epilogue's O stored by TMA a warp at a time), built with every unit (.ab/libs/q2full.so.gz, not
# committed), through the GPU test files, part 1 of 2 (the forward-heavy files). Carry the .so.gz.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
gunzip -c .ab/libs/q2full.so.gz > dash/_C.abi3.so
FILES="test_fwd test_head_dims test_varlen test_window test_softcap test_gqa test_invariance test_long_sequences" \
  STRESS_MAX_S=0 DEADLINE=560 OUT=$OUT/tests_a bash tools/gpu_test_job.sh
