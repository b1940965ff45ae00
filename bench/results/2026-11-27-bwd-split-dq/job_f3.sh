#!/bin/bash
# Prepared for the next session: the backward grid beside FlashAttention-3 (hdim 64 / 128, 2k-16k,
# both masks) on job_f1.sh's library, FA3 from .ab/fa3 (carry .ab/libs and .ab/fa3), for README's
# and RESULTS' tables.
gunzip -c .ab/libs/head.so.gz > dash/_C.abi3.so
PYTHONPATH=$PWD/.ab/fa3:$PYTHONPATH python3 bench/bench_bwd.py --hdim 64 128 --seqlen 2048 4096 8192 16384 \
  --mask full causal --impl dash_det dash fa3_det fa3 cudnn --warm-s 1 --min-s 0.5 --out $OUT 2>&1 | tee $OUT/bwd_fa3.txt | tail -25
