#!/bin/bash
# Call 4 (session 34): long sequences with few heads on HEAD's kernels (RESULTS item 248). Carry
# .ab/libs/ci33.so.gz (CI's build of dcfa64f: HEAD's kernels) and .ab/fa3v (FlashAttention-3 0251105a, not
# committed). hdim 128 backward, dash det (auto: grid-invariant diagonal / ascending), dash det with
# symmetric shift (grid-dependent bits, opt-in), dash non-det, FA3 det and non-det: 4 heads (hidden 512,
# the shape of 32 heads under 8-way tensor parallelism) at 16k / 32k both masks, 16 heads at 32k causal.
# Prediction: calls 1-3 read det / non-det 0.92-0.94 at 4 heads causal (the diagonal order's tail: a walk of
# 256-512 steps is a quarter of a CTA's work there); symmetric shift pairs long and short walks, so no tail:
# 0.97-1.0x non-det there; FA3 det (its own order, grid-dependent) 0.85-0.9x FA3 non-det as at 16 heads;
# full masks det / non-det 0.98-1.0.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
gunzip -c .ab/libs/ci33.so.gz > dash/_C.abi3.so
I='dash_det dash_det:symmetric_shift dash fa3_det fa3'
G='--hdim 128 --warm-s 1 --min-s 0.5'
PYTHONPATH=$PWD/.ab/fa3v timeout 300 python3 bench/bench_bwd.py $G --seqlen 16384 32768 --total-tokens 32768 --hidden 512 \
  --mask causal full --impl $I > $OUT/d_h4.txt 2>&1
echo "h4 rc=$? at $(t)"; grep -E "^ *128 |dash det|Traceback|Error" $OUT/d_h4.txt | head -12
PYTHONPATH=$PWD/.ab/fa3v timeout 200 python3 bench/bench_bwd.py $G --seqlen 32768 --total-tokens 32768 \
  --mask causal --impl $I > $OUT/d_h16_32k.txt 2>&1
echo "h16 32k rc=$? at $(t)"; grep -E "^ *128 |dash det|Traceback|Error" $OUT/d_h16_32k.txt | head -6
echo "all done at $(t)"
