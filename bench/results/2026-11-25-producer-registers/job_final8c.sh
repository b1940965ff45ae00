#!/bin/bash
# The final library: the GPU test files job_final8b.sh's deadline cut short.
gunzip -c .ab/final8.so.gz > dash/_C.abi3.so
export PYTHONPATH=$PWD
FILES="test_distributed_gpu test_traits" DEADLINE=${DEADLINE:-280} bash tools/gpu_test_job.sh
