#!/bin/bash
# Session 24, fourth call: the short-walk forward kernel (this change, library s24, every unit; its
# check_sass report is main's plus the two short-walk kernels, sass_s24.txt) through the GPU test
# files that run the forward and the packed / windowed / invariant paths.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
gunzip -c .ab/libs/s24.so.gz > dash/_C.abi3.so
FILES="test_traits test_fwd test_varlen test_invariance test_window" SASS=0 DEADLINE=240 OUT=$OUT bash tools/gpu_test_job.sh
