#!/bin/bash
# Session 20's check of main after the merge (ee12877: deterministic 192 / 192x128 full masks split
# to walks of 64 steps, split calls dealt at least 4 walks a chunk). (1) The GPU tests of the plan
# on `.ci/run`'s whole library of ee12877 (.ab/libs/ee12877.so.gz). (2) A/B against main before the
# merge (.ab/libs/cb47de3.so.gz), two rounds: GQA 192 / 192x128 16 / 4 full, 2k-16k, det and non-det
# in one process (the det / non-det ratio of issue 13), and Llama 32 / 8 full as the control.
# Prediction (items 163-164's sweep at 2k-4k): det +2.5-3.5% at 192 / 192x128 2k, +2-3% at 4k,
# +0-2% at 8k-16k; non-det and Llama unchanged (+-1%). Carry both libraries.
START=$(date +%s)
OUT=${OUT:-/tmp/out}; mkdir -p $OUT/tests $OUT/ab
gunzip -c .ab/libs/ee12877.so.gz > dash/_C.abi3.so
FILES="test_gqa test_determinism test_invariance test_head_dims test_deadlock test_bwd_correctness" SASS=0 STRESS_MAX_S=15 \
DEADLINE=200 OUT=$OUT/tests bash tools/gpu_test_job.sh
echo "tests done at $(( $(date +%s) - START ))s"
LIBS='.ab/libs/cb47de3.so.gz .ab/libs/ee12877.so.gz' SASS=0 ROUNDS=2 \
BENCH='bench/bench_bwd.py --hdim 192 192x128 --hidden 3072 --heads-kv 4 --seqlen 2048 4096 8192 16384 --mask full --impl dash_det dash --warm-s 1 --min-s 0.5 ;; bench/bench_bwd.py --hdim 128 --hidden 4096 --heads-kv 8 --seqlen 2048 16384 --mask full --impl dash_det --warm-s 1 --min-s 0.5' \
OUT=$OUT/ab bash bench/ab_job.sh
echo "all done at $(( $(date +%s) - START ))s"
