#!/bin/bash
# Session 37, call 6: the landed library (`land`) beside FlashAttention-3 0251105a on Llama-3-8B's GQA
# forward and the packed mixes' forward, each in both orders (README's numbers; item 254 read Llama causal
# 1.012 / 0.993 / 1.014 at 2k / 4k / 16k, full 1.014-1.034, packed MHA 1.023 / 0.996, GQA 1.033 / 0.995).
# Carry .ab/libs/land.so.gz .ab/fa3v. Prediction: within +-1% of item 254 (q2's A/B on Llama: -1.0..+0.6%).
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/land.so.gz > dash/_C.abi3.so
G='--warm-s 1 --min-s 0.5'
for order in "dash fa3" "fa3 dash"; do
  tag=$(echo $order | tr ' ' _)
  PYTHONPATH=$PWD/.ab/fa3v timeout 70 python3 bench/bench_fwd.py $G --hdims 128 --hidden 4096 --heads-kv 8 \
    --seqlens 2048 4096 16384 --masks causal full --impls $order > $OUT/llama_$tag.txt 2>&1
  echo "llama $tag rc=$? at $(t)"
  PYTHONPATH=$PWD/.ab/fa3v timeout 45 python3 bench/bench_varlen.py --pass fwd --mix long short --impl $order $G > $OUT/packed_$tag.txt 2>&1
  echo "packed $tag rc=$? at $(t)"
  PYTHONPATH=$PWD/.ab/fa3v timeout 45 python3 bench/bench_varlen.py --pass fwd --mix long short --heads 32 --heads-kv 8 --impl $order $G > $OUT/packed_gqa_$tag.txt 2>&1
  echo "packed gqa $tag rc=$? at $(t)"
done
grep -h -E "^\||long|short" $OUT/*.txt
