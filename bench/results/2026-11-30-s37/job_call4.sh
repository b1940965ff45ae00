#!/bin/bash
# Session 37, call 4: the landed library (`land`, main with fwd_q_buffers) through the GPU test files
# that run the forward kernels (hdim 64's direct-epilogue kernel changed since q2full passed all 16
# files: back to one Q buffer, its first K before Q). Carry .ab/libs/land.so.gz.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
gunzip -c .ab/libs/land.so.gz > dash/_C.abi3.so
FILES="test_fwd test_head_dims test_softcap test_varlen test_window test_gqa test_invariance test_determinism test_traits" \
  SASS=0 DEADLINE=420 OUT=$OUT/t bash tools/gpu_test_job.sh
