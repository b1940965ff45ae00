#!/bin/bash
# Session 38, call 7: what the clusters are worth to FA3's full-mask forward: the peer of every earlier job
# (.ab/fa3v, FLASH_ATTENTION_DISABLE_CLUSTER) against the cluster build (.ab/fa3c), alternating processes,
# two rounds each, hdim 128 full 2k / 8k / 16k and Llama-3-8B full 16k, dash in each process as the control.
# Carry .ab/libs/land.so.gz .ab/fa3v .ab/fa3cz.
# Prediction: fa3c 1-3% above fa3v at 8k-16k full (K / V multicast halves their L2 reads).
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
rm -rf .ab/fa3c && cp -r .ab/fa3cz .ab/fa3c && gunzip .ab/fa3c/flash_attn_3/_C.abi3.so.gz
gunzip -c .ab/libs/land.so.gz > dash/_C.abi3.so
G='--warm-s 1 --min-s 0.5'
for r in 1 2; do
  for peer in fa3v fa3c; do
    PYTHONPATH=$PWD/.ab/$peer timeout 40 python3 bench/bench_fwd.py $G --hdims 128 --seqlens 2048 8192 16384 --masks full \
      --impls fa3 dash > $OUT/mha_${peer}_$r.txt 2>&1
    PYTHONPATH=$PWD/.ab/$peer timeout 30 python3 bench/bench_fwd.py $G --hdims 128 --hidden 4096 --heads-kv 8 --seqlens 16384 \
      --masks full --impls fa3 dash > $OUT/llama_${peer}_$r.txt 2>&1
    echo "round $r $peer at $(t)"
  done
done
for f in $OUT/*.txt; do echo "== $(basename $f)"; grep -E "^\| 128" $f; done
