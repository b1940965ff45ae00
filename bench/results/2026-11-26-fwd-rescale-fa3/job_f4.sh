#!/bin/bash
# FlashAttention-3 side by side on the final library (issue 15's grid): the backward (dash det = auto,
# dash non-det, FA3 det, FA3 non-det) at hdim 128 / 64, 2k-16k, both masks; Llama-3-8B's GQA shape
# (32 query heads on 8 K/V heads, hdim 128); the packed-document mixes (hdim 128, 16 heads, causal).
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/.ab/fa3:$PWD
gunzip -c .ab/libs/final.so.gz > dash/_C.abi3.so
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
B="--warm-s 1 --min-s 0.5"
timeout 240 python3 bench/bench_bwd.py --hdim 128 64 --seqlen 2048 4096 8192 16384 --mask full causal \
  --impl dash_det dash fa3_det fa3 $B > $OUT/bwd_fa3.txt 2>&1
timeout 90 python3 bench/bench_bwd.py --hdim 128 --hidden 4096 --heads-kv 8 --seqlen 4096 16384 --mask full causal \
  --impl dash_det fa3_det fa3 $B > $OUT/gqa_fa3.txt 2>&1
timeout 90 python3 bench/bench_varlen.py --hdim 128 --mix long short --impl dash_det fa3_det fa3 $B > $OUT/varlen_fa3.txt 2>&1
timeout 60 python3 bench/bench_varlen.py --hdim 128 --heads 32 --heads-kv 8 --mix long short --impl dash_det fa3_det fa3 $B \
  > $OUT/varlen_gqa_fa3.txt 2>&1
