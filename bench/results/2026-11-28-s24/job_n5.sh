#!/bin/bash
# Session 24, sixth call (run as a command line): s24seq (the landed code) through the GPU tests of
# the paths its change touches (packed forward numbering), then a short stress run.
gunzip -c .ab/libs/s24seq.so.gz > dash/_C.abi3.so && FILES="test_varlen test_invariance test_window" SASS=0 DEADLINE=120 \
  STRESS_MAX_S=20 OUT=$OUT bash tools/gpu_test_job.sh
