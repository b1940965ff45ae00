#!/bin/bash
# The walk library's release checks (check_sass, GPU test files, stress loop).
gunzip -c .ab/libs/walk.so.gz > dash/_C.abi3.so
export PYTHONPATH=$PWD
DEADLINE=${DEADLINE:-540} bash tools/gpu_test_job.sh
