#!/bin/bash
# The softcap backward's 1 - t^2 folded into P as P is made (bwd_softcap_fold.patch; library bsc:
# bf16 softcap backward units at 64 / 128 / 192 and the bf16 forward units there). P goes to 16 bits
# for the dV GEMM in the P pass, a register pair at a time; acc_s keeps P (1 - t^2) in fp32, so dS is
# P (1 - t^2) (dP - D) and the fp16 copy of 1 - t^2 (its pack and unpack) is gone. Carry
# .ab/libs/main.so.gz and .ab/libs/bsc.so.gz.
# Why: FA3's softcap backward at hdim 128 full costs it 8-10% (d/); dash's 12.4-12.7%.
# check_sass: MMA main loops 128 938 / 846 -> 922 / 832 (band / full), 192 637 / 592 -> 629 / 586, 64
# 892 / 800 -> 873 / 786; no spills in them (the producer warps' as before).
# Prediction: sanity passes; softcap 30 det and non-det +0.5-2% at 64 / 128 / 192.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/bsc.so.gz > dash/_C.abi3.so
timeout 100 python3 -m pytest -q -p no:cacheprovider tests/test_softcap.py \
  -k "(test_matches_reference and bf16) or (test_bitwise_reproducible and (4097 or 2048))" > $OUT/sanity_bsc.txt 2>&1
echo "bsc sanity rc=$?: $(tail -1 $OUT/sanity_bsc.txt)"
B="bench/bench_bwd.py --hdim 64 128 192 --seqlen 4096 16384 --mask full causal --impl dash_det dash --softcap 30 --warm-s 1 --min-s 0.5"
LIBS='.ab/libs/main.so.gz .ab/libs/bsc.so.gz' BENCH="$B" ROUNDS=2 SASS=0 OUT=$OUT/ab bash bench/ab_job.sh 2>&1 | tail -16
echo "all done at $(t)"
