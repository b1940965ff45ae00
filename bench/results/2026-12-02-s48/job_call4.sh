#!/bin/bash
# Call 4: CI's full library of f0fc374 (the capped deterministic tail) through every GPU test file (no stress
# run), then hdim 128 beside FlashAttention-3 (0251105a): causal 8k x 2 / 16k and full 16k, det / non-det / FA3
# non-det / FA3 det, two rounds with the implementations' order reversed; and hdim 64 causal 16k: det, non-det
# auto, non-det diagonal, FA3 non-det with clocks (is 64's det gap its order or its adds?). Carry: .ab/libs/fullf0fc374.so.gz
# .ab/libs/fa3c.so.gz .ab/fa3py
set -u
OUT=${OUT:-/tmp/out}
gunzip -c .ab/libs/fullf0fc374.so.gz > dash/_C.abi3.so
mkdir -p .ab/fa3py/flash_attn_3 && gunzip -c .ab/libs/fa3c.so.gz > .ab/fa3py/flash_attn_3/_C.abi3.so
mkdir -p "$OUT/tests"
SASS=0 DEADLINE=390 STRESS_MAX_S=0 OUT=$OUT/tests bash tools/gpu_test_job.sh
export PYTHONPATH=$PWD/.ab/fa3py
B='bench/bench_bwd.py --hdim 128 --seqlen 8192 16384 --mask causal full --warm-s 1 --min-s 0.5'
timeout 100 python3 $B --impl dash_det dash fa3 fa3_det > "$OUT/fa3_r1.txt" 2>&1; echo "r1 rc=$?"
timeout 100 python3 $B --impl fa3_det fa3 dash dash_det > "$OUT/fa3_r2.txt" 2>&1; echo "r2 rc=$?"
timeout 80 python3 bench/bench_bwd.py --hdim 64 --seqlen 16384 --mask causal --warm-s 1 --min-s 0.5 --clocks \
  --impl dash_det dash dash:diagonal fa3 > "$OUT/h64.txt" 2>&1; echo "h64 rc=$?"
grep -E "^ *(128|64) " "$OUT"/fa3_r*.txt "$OUT/h64.txt"
