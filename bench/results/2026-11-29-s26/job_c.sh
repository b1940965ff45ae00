#!/bin/bash
# Session 26, third call: part of the softmax's exponentials on the FMA pipe (softmax.h
# exp2_on_fma). Libraries: main (s25), c2 (softcapped steps: 2 of every 4 exponentials on the FMA
# pipe; hdim 128 bf16 forward units), c1p1 (1 of 4 in every step, capped or not; hdim 64 / 128 bf16
# forward units). Accuracy first (fwd_check.py on each variant), then the A/B.
# Prediction: hdim 128 softcap 30 forward +10-15% with c2 (the softmax phase MUFU-bound: 2 MUFU a
# score ~ the tile's GEMM time; half the exp2s on the FMA pipe shortens it ~25%), +5-8% with c1;
# plain hdim 128 within +-1% with c1 (not MUFU-bound), hdim 64 plain 0..+2% (1 MUFU a score ~ its
# GEMM time).
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
for lib in c2 c1p1; do
  gunzip -c .ab/libs/$lib.so.gz > dash/_C.abi3.so
  hd=128; [ $lib = c1p1 ] && hd="128 64"
  timeout 60 python3 bench/results/2026-11-29-s26/fwd_check.py $hd > $OUT/check_$lib.txt 2>&1; echo "check $lib rc=$?"; cat $OUT/check_$lib.txt
done
gunzip -c .ab/libs/main.so.gz > dash/_C.abi3.so
timeout 60 python3 bench/results/2026-11-29-s26/fwd_check.py 128 64 > $OUT/check_main.txt 2>&1; echo "check main rc=$?"; cat $OUT/check_main.txt
echo "checks done at $(t)"
LIBS='.ab/libs/main.so.gz .ab/libs/c2.so.gz .ab/libs/c1p1.so.gz' SASS=0 ROUNDS=2 \
BENCH='bench/bench_fwd.py --hdims 128 --seqlens 2048 8192 --masks causal full --softcap 30 --impls dash --warm-s 1 --min-s 0.5 --out /tmp/bf;;bench/bench_fwd.py --hdims 128 --seqlens 2048 8192 --masks causal full --impls dash --warm-s 1 --min-s 0.5 --out /tmp/bf' \
  OUT=$OUT/ab128 bash bench/ab_job.sh
echo "A/B 128 done at $(t)"
LIBS='.ab/libs/main.so.gz .ab/libs/c1p1.so.gz' SASS=0 ROUNDS=2 \
BENCH='bench/bench_fwd.py --hdims 64 --seqlens 2048 8192 --masks causal full --impls dash --warm-s 1 --min-s 0.5 --out /tmp/bf;;bench/bench_fwd.py --hdims 64 --seqlens 2048 8192 --masks causal full --softcap 30 --impls dash --warm-s 1 --min-s 0.5 --out /tmp/bf' \
  OUT=$OUT/ab64 bash bench/ab_job.sh
echo "A/B 64 done at $(t)"
