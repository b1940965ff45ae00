#!/bin/bash
# A/B of three libraries (hdim 64 / 128 bf16 units; final3 the whole library of 12729d9):
#   final3: the sum kernel after the main one, deterministic kernels launched cooperatively;
#   coop:   HEAD's kernels, but counter-dealt deterministic calls draw every item (the first
#           too) and launch as usual, not cooperatively;
#   fold2:  coop + the last part of a KV tile adds the parts' dK / dV (chunks of up to 32 pairs).
export PYTHONUNBUFFERED=1
W="--warm-s 1 --min-s 0.5"
LIBS=".ab/libs/final3.so.gz .ab/libs/coop.so.gz .ab/libs/fold2.so.gz" SASS=0 ROUNDS=2 \
BENCH="bench/bench_bwd.py --hdim 128 --hidden 4096 --heads-kv 8 --seqlen 2048 4096 8192 16384 --mask full causal --impl dash_det $W ;; bench/bench_bwd.py --hdim 128 --seqlen 2048 4096 8192 16384 --mask full causal --impl dash_det $W ;; bench/bench_bwd.py --hdim 64 --seqlen 4096 16384 --mask full causal --impl dash_det $W" \
  bash bench/ab_job.sh > $OUT/ab.txt 2>&1; echo "ab rc=$?"
cat $OUT/summary.txt
