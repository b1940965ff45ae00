#!/bin/bash
# Call 4: CI's full library of 08c300d (the capped deterministic tail; the tail at 96 / 192 / 192 x 128 too)
# through every GPU test file (no stress run); then hdim 128 beside FlashAttention-3 (0251105a): causal 8k x 2 /
# 16k and full 16k, det / non-det / FA3 non-det / FA3 det, two processes with the implementations' order
# reversed (the device budget left, 594 s, did not hold the hdim 64 probe planned here); 192 x 128 with 2 heads at 16k, the tail against item order (DASH_TEST_ITEM_ORDER_TAIL=1).
# Carry: .ab/libs/full08c300d.so.gz .ab/libs/fa3c.so.gz .ab/fa3py
set -u
OUT=${OUT:-/tmp/out}
gunzip -c .ab/libs/full08c300d.so.gz > dash/_C.abi3.so
mkdir -p .ab/fa3py/flash_attn_3 && gunzip -c .ab/libs/fa3c.so.gz > .ab/fa3py/flash_attn_3/_C.abi3.so
mkdir -p "$OUT/tests"
SASS=0 DEADLINE=330 STRESS_MAX_S=0 OUT=$OUT/tests bash tools/gpu_test_job.sh
C='bench/bench_bwd.py --hdim 192x128 --seqlen 16384 --hidden 384 --mask causal --impl dash_det --warm-s 1 --min-s 0.5'
timeout 40 python3 $C > "$OUT/x128_tail.txt" 2>&1
DASH_TEST_ITEM_ORDER_TAIL=1 timeout 40 python3 $C > "$OUT/x128_order.txt" 2>&1
export PYTHONPATH=$PWD/.ab/fa3py
B='bench/bench_bwd.py --hdim 128 --seqlen 8192 16384 --mask causal full --warm-s 1 --min-s 0.5'
timeout 80 python3 $B --impl dash_det dash fa3 fa3_det > "$OUT/fa3_r1.txt" 2>&1; echo "r1 rc=$?"
timeout 80 python3 $B --impl fa3_det fa3 dash dash_det > "$OUT/fa3_r2.txt" 2>&1; echo "r2 rc=$?"
grep -E "^ *(128|64|192x128) " "$OUT"/x128_*.txt "$OUT"/fa3_r*.txt
