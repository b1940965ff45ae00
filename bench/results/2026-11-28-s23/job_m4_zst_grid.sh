#!/bin/bash
# The zst library's backward beside FA3 (same process per row, steady state): hdim 64 / 128
# 2k-16k both masks, the Llama-3-8B GQA shape (32 / 8 heads, hdim 128), and the packed mixes
# (dash only: the FA3 peer is built without varlen). Carry .ab/libs/zst_full.so.gz and .ab/fa3.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/zst_full.so.gz > dash/_C.abi3.so
W='--warm-s 1 --min-s 0.5'
export PYTHONPATH=$PWD/.ab/fa3:$PYTHONPATH
timeout 170 python3 bench/bench_bwd.py --hdim 64 128 --seqlen 2048 4096 8192 16384 --mask full causal \
  --impl dash_det dash fa3_det fa3 $W > $OUT/bwd_fa3.txt 2>&1
echo "grid rc=$? at $(t)"; grep -E "^ *[0-9x]+ +[0-9]+ " $OUT/bwd_fa3.txt
timeout 80 python3 bench/bench_bwd.py --hdim 128 --hidden 4096 --heads-kv 8 --seqlen 4096 16384 --mask full causal \
  --impl dash_det dash fa3_det fa3 $W > $OUT/bwd_llama.txt 2>&1
echo "llama rc=$? at $(t)"; grep -E "^ *[0-9x]+ +[0-9]+ " $OUT/bwd_llama.txt
timeout 60 python3 bench/bench_varlen.py --impl dash_det dash $W > $OUT/varlen.txt 2>&1
echo "varlen rc=$? at $(t)"; tail -6 $OUT/varlen.txt
