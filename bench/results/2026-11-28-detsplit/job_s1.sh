#!/bin/bash
# Session 20's first call. (1) The GPU tests of 12b53af (the walk limit as a generated knob) on
# main's build (.ab/libs/cb47de3.so.gz: CI's library of cb47de3, the code of HEAD), which no GPU has
# run yet. (2) RESULTS item 161's A/B (job_n3.sh) with that library as the baseline instead of f155
# (same kernels; main's Python reads main's library): the det-full-split branch's library against
# main, deterministic full masks, GQA 192 / 192x128 16 / 4 and Llama 32 / 8, 2k / 4k / 16k, two
# rounds. Prediction (item 161): +5-8% at 192 / 192x128 2k-4k, +0-2% at 16k, Llama 2k-4k unchanged,
# Llama 16k within +-1%. Carry .ab/libs/cb47de3.so.gz and .ab/libs/detsplit.so.gz.
START=$(date +%s)
OUT=${OUT:-/tmp/out}; mkdir -p $OUT/tests $OUT/ab
gunzip -c .ab/libs/cb47de3.so.gz > dash/_C.abi3.so
FILES="test_gqa test_determinism test_invariance test_head_dims test_deadlock test_bwd_correctness" SASS=0 STRESS_MAX_S=15 \
DEADLINE=200 OUT=$OUT/tests bash tools/gpu_test_job.sh
echo "tests done at $(( $(date +%s) - START ))s"
LIBS='.ab/libs/cb47de3.so.gz .ab/libs/detsplit.so.gz' SASS=0 ROUNDS=2 \
BENCH='bench/bench_bwd.py --hdim 192 192x128 --hidden 3072 --heads-kv 4 --seqlen 2048 4096 16384 --mask full --impl dash_det --warm-s 1 --min-s 0.5 ;; bench/bench_bwd.py --hdim 128 --hidden 4096 --heads-kv 8 --seqlen 2048 4096 16384 --mask full --impl dash_det --warm-s 1 --min-s 0.5' \
OUT=$OUT/ab bash bench/ab_job.sh
echo "all done at $(( $(date +%s) - START ))s"
