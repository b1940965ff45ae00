#!/bin/bash
# Session 22, call 3: the GQA shapes of the non-deterministic causal change. (1) A/B twob2 / s22,
# two rounds: Llama-3-8B's attention (32 / 8, hdim 128) 2k-16k and MQA 16 / 1 at 4k / 16k (its
# 128 KV tiles now split in 4 parts for 3 rounds, where symmetric shift's 64 pairs split in 8).
# Prediction: Llama +1-2% as MHA; MQA within 2%. (2) MQA 16k on s22 with DASH_KV_PARTS 2 / 4 / 8.
# (3) Llama beside FA3 non-det on s22. Carry .ab/libs/{twob2,s22}.so.gz and .ab/fa3.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT/ab $OUT/sweep
export PYTHONUNBUFFERED=1
W='--warm-s 1 --min-s 0.5'
LIBS='.ab/libs/twob2.so.gz .ab/libs/s22.so.gz' SASS=0 ROUNDS=2 \
BENCH="bench/bench_bwd.py --hdim 128 --hidden 4096 --heads-kv 8 --seqlen 2048 4096 8192 16384 --mask causal --impl dash $W ;; bench/bench_bwd.py --hdim 128 --heads-kv 1 --seqlen 4096 16384 --mask causal --impl dash $W" \
OUT=$OUT/ab bash bench/ab_job.sh
echo "A/B done at $(t)"
gunzip -c .ab/libs/s22.so.gz > dash/_C.abi3.so
for parts in 2 4 8; do
  DASH_KV_PARTS=$parts timeout 60 python3 bench/bench_bwd.py --hdim 128 --heads-kv 1 --seqlen 16384 --mask causal \
    --impl dash $W > $OUT/sweep/mqa_p$parts.txt 2>&1
  echo "parts $parts at $(t): $(grep -hE '^ *[0-9x]+ +[0-9]+ ' $OUT/sweep/mqa_p$parts.txt)"
done
PYTHONPATH=$PWD/.ab/fa3:$PYTHONPATH timeout 120 python3 bench/bench_bwd.py --hdim 128 --hidden 4096 --heads-kv 8 \
  --seqlen 2048 4096 8192 16384 --mask causal --impl dash fa3 $W > $OUT/sweep/llama_fa3.txt 2>&1
echo "fa3 rc=$? at $(t)"; grep -E "^ *[0-9x]+ +[0-9]+ " $OUT/sweep/llama_fa3.txt
(cd $OUT/sweep && tar czf ../sweep.tgz ./*.txt) && rm -rf $OUT/sweep
