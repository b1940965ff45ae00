#!/bin/bash
# The final library's remaining GPU test files and the stress loop.
gunzip -c .ab/libs/final7.so.gz > dash/_C.abi3.so
export PYTHONPATH=$PWD
FILES="test_transformers_integration test_distributed_gpu" DEADLINE=${DEADLINE:-240} bash tools/gpu_test_job.sh
