#!/bin/bash
# Prepared for the next session (item 156): on an H200 (`nvidia-h200` kind; check the reply's card),
# first job_f5's check of bench_bwd's settle run (does the first implementation of a process still
# read faster than the second?), then the backward grid beside FlashAttention-3 with it, dash_det
# first as in the earlier grids, hdim 64 / 128, 2k-16k, both masks, and the Llama-3-8B GQA shape.
# Carry .ab/libs/f155.so.gz (the CI build of 11f2f9e), .ab/fa3 (FA3 built as in
# shared/design/GPU-WORKFLOW.md, outside git) and .site.
START=$(date +%s)
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
bash bench/results/2026-11-28-full-split/job_f5.sh > $OUT/f5.log 2>&1
echo "settle check done at $(( $(date +%s) - START ))s"; grep -A3 "^== " $OUT/f5.log
gunzip -c .ab/libs/f155.so.gz > dash/_C.abi3.so
W="--warm-s 1 --min-s 0.5"
PYTHONPATH=$PWD/.ab/fa3:$PYTHONPATH timeout 300 python3 bench/bench_bwd.py --hdim 64 128 --seqlen 2048 4096 8192 16384 \
  --mask full causal --impl dash_det dash fa3_det fa3 cudnn $W --out $OUT/grid > $OUT/bwd_fa3.txt 2>&1
echo "grid rc=$? at $(( $(date +%s) - START ))s"; grep -E "^ *[0-9x]+ +[0-9]+ " $OUT/bwd_fa3.txt
PYTHONPATH=$PWD/.ab/fa3:$PYTHONPATH timeout 120 python3 bench/bench_bwd.py --hdim 128 --hidden 4096 --heads-kv 8 \
  --seqlen 2048 4096 8192 16384 --mask full causal --impl dash_det dash fa3_det fa3 $W --out $OUT/llama > $OUT/bwd_fa3_llama.txt 2>&1
echo "llama rc=$? at $(( $(date +%s) - START ))s"; grep -E "^ *[0-9x]+ +[0-9]+ " $OUT/bwd_fa3_llama.txt
