#!/bin/bash
# For the next session (not run in session 47): is the deterministic causal gap at the power-capped grid the
# diagonal order's balance, the ordered tail's hand-offs, or the order's work per clock? No build: CI's library
# of 34e9cfd (.ab/libs/full34e9cfd.so.gz) and FlashAttention-3 (0251105a, tools/build_fa3_peer.sh, built in
# session 47: .ab/libs/fa3c.so.gz + .ab/fa3py, the package's Python files). Carry:
#   .ab/libs/full34e9cfd.so.gz .ab/libs/fa3c.so.gz .ab/fa3py
# hdim 128 causal 8k / 16k, steady state with clocks, two rounds with the process order reversed:
#   det auto (diagonal, tail longest first), non-det auto (ascending sections), non-det diagonal (its tail
#   also dealt longest first, but no waits: a non-det tail item draws its successor at once), FA3 non-det;
#   then det auto and non-det diagonal with DASH_TEST_ITEM_ORDER_TAIL=1 (item order).
# Reading: non-det diagonal with the reversed tail at non-det auto's pace (within ~1%) -> the det gap is the
# ordered tail's hand-offs (item 317); still 3-5% below it (item 297 read 558.6 / 587.0 in item order) -> the
# diagonal order itself costs work a clock (L2 / balance), and a grid-invariant order must fix that instead.
set -u
OUT=${OUT:-/tmp/out}
gunzip -c .ab/libs/full34e9cfd.so.gz > dash/_C.abi3.so
mkdir -p .ab/fa3py/flash_attn_3 && gunzip -c .ab/libs/fa3c.so.gz > .ab/fa3py/flash_attn_3/_C.abi3.so
export PYTHONPATH=$PWD/.ab/fa3py
B='bench/bench_bwd.py --hdim 128 --seqlen 8192 16384 --mask causal --warm-s 1 --min-s 0.5 --clocks'
for round in 1 2; do
  if [ $round = 1 ]; then order="on off"; else order="off on"; fi
  for side in $order; do
    if [ $side = on ]; then
      timeout 200 python3 $B --impl dash_det dash dash:diagonal fa3 > "$OUT/r${round}_tail_on.txt" 2>&1
    else
      DASH_TEST_ITEM_ORDER_TAIL=1 timeout 120 python3 $B --impl dash_det dash:diagonal > "$OUT/r${round}_tail_off.txt" 2>&1
    fi
    echo "round $round tail $side rc=$?"; grep -E "^ *128" "$OUT/r${round}_tail_${side}.txt"
  done
done
