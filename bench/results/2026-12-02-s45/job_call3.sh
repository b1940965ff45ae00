#!/bin/bash
# Session 45, call 3: hdim 256 backward, bf16.
# 1. softcap 30 det / non-det and plain non-det at 4k / 16k, full and causal, land256 against final, two rounds,
#    one process per library and round (bench/ab_job.sh LIBS).
# 2. final beside FlashAttention-3 in one process, FA3 first this time (call 2 ran it last).
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt 2>&1; cat $OUT/gpu.txt
gunzip -c .ab/fa3c/flash_attn_3/_C.abi3.so.gz > .ab/fa3c/flash_attn_3/_C.abi3.so
LIBS='.ab/libs/land256.so.gz .ab/libs/final.so.gz' ROUNDS=2 SASS=0 \
  BENCH='bench/bench_bwd.py --hdim 256 --seqlen 4096 16384 --mask full causal --impl dash_det dash --softcap 30 --warm-s 1 --min-s 0.5;; bench/bench_bwd.py --hdim 256 --seqlen 4096 16384 --mask full causal --impl dash --warm-s 1 --min-s 0.5' \
  OUT=$OUT/ab_softcap timeout 300 bash bench/ab_job.sh > $OUT/ab_softcap_stdout.txt 2>&1
echo "ab softcap rc=$? at $(t)"; grep -A14 "^| bench" $OUT/ab_softcap_stdout.txt
gunzip -c .ab/libs/final.so.gz > dash/_C.abi3.so
PYTHONPATH=$PWD/.ab/fa3c timeout 200 python3 bench/bench_bwd.py --hdim 256 --seqlen 2048 4096 8192 16384 --mask full causal \
  --impl fa3 dash_det dash --warm-s 1 --min-s 0.5 > $OUT/fa3_p2.txt 2>&1
echo "fa3 p2 rc=$? at $(t)"; tail -14 $OUT/fa3_p2.txt
