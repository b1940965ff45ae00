#!/bin/bash
# The final library's remaining GPU test files, then hdim 64's backward against HEAD's kernels
# (the producer's 40 registers), fixed length and packed, two rounds.
gunzip -c .ab/final8.so.gz > dash/_C.abi3.so
export PYTHONPATH=$PWD
OUT0=$OUT
OUT=$OUT0/tests FILES="test_transformers_integration test_distributed_gpu test_traits" DEADLINE=${DEADLINE:-200} bash tools/gpu_test_job.sh
LIBS='.ab/base.so.gz .ab/final8.so.gz' ROUNDS=2 \
BENCH='bench/bench_bwd.py --hdim 64 --seqlen 2048 4096 16384 --mask causal full --impl dash_det --warm-s 1 --min-s 0.5 ;; bench/bench_varlen.py --hdim 64 --heads 32 --mix long short --impl dash_det --warm-s 1 --min-s 0.5' \
OUT=$OUT0/ab timeout 230 bash bench/ab_job.sh
