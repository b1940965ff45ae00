#!/bin/bash
# Session 38, call 6: call 5's one-order forward rows again with FA3 first (the first implementation of a
# process reads ~1% fast, item 157): Llama-3-8B full and hdim 96 / 192 / 192x128 / 256, beside FA3 with
# clusters (.ab/fa3c). Carry .ab/libs/land.so.gz .ab/fa3cz.
# Prediction: each ratio 0.5-1.5% above call 5's (dash second now).
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
rm -rf .ab/fa3c && cp -r .ab/fa3cz .ab/fa3c && gunzip .ab/fa3c/flash_attn_3/_C.abi3.so.gz
gunzip -c .ab/libs/land.so.gz > dash/_C.abi3.so
export PYTHONPATH=$PWD/.ab/fa3c:${PYTHONPATH:-}
G='--warm-s 1 --min-s 0.5'
timeout 60 python3 bench/bench_fwd.py $G --hdims 128 --hidden 4096 --heads-kv 8 --seqlens 2048 4096 16384 --masks full \
  --impls fa3 dash > $OUT/fwd_llama_full_fa3_dash.txt 2>&1
echo "fwd llama full rc=$? at $(t)"
timeout 110 python3 bench/bench_fwd.py $G --hdims 96 192 192x128 256 --seqlens 4096 16384 --masks causal full \
  --impls fa3 dash > $OUT/fwd_hdims_fa3_dash.txt 2>&1
echo "fwd hdims rc=$? at $(t)"
grep -h -E "^\|" $OUT/fwd_llama_full_fa3_dash.txt $OUT/fwd_hdims_fa3_dash.txt
