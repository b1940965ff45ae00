#!/bin/bash
# Where the causal backward's gap to FA3 sits (issue 15), H200, f155 library (11f2f9e, the current
# kernels): per head dim 64 / 128 at 4k and 16k,
#   full: dash det (ascending) / non-det (shift) / non-det ascending beside FA3 non-det / det;
#   near-full band (window (L-2, L-2): the band kernel, diagonal, full-length walks, two corner tiles
#     masked): isolates the band kernel's step from the causal task structure;
#   causal: det (diagonal) / non-det (symmetric shift) / non-det diagonal / non-det descending (static,
#     longest first) beside FA3 non-det / det;
# then the forward beside FA3 and cuDNN (hdim 64 / 128, 512-16k, both masks).
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
gunzip -c .ab/libs/f155.so.gz > dash/_C.abi3.so
export PYTHONPATH=$PWD/.ab/fa3:$PYTHONPATH
W="--warm-s 1 --min-s 0.5"
for h in 64 128; do
  for L in 4096 16384; do
    timeout 60 python3 bench/bench_bwd.py --hdim $h --seqlen $L --mask full --impl dash_det dash dash:ascending fa3 fa3_det $W --out /tmp/b > $OUT/full_${h}_${L}.txt 2>&1
    timeout 40 python3 bench/bench_bwd.py --hdim $h --seqlen $L --mask full --window $((L - 1)) --impl dash_det dash $W --out /tmp/b > $OUT/nearfull_${h}_${L}.txt 2>&1
    timeout 60 python3 bench/bench_bwd.py --hdim $h --seqlen $L --mask causal --impl dash_det dash dash:diagonal dash:descending fa3 fa3_det $W --out /tmp/b > $OUT/causal_${h}_${L}.txt 2>&1
    echo "== hdim $h L $L $(t)"; grep -hE "^ *[0-9x]+ +[0-9]+ |^hdim" $OUT/full_${h}_${L}.txt $OUT/nearfull_${h}_${L}.txt $OUT/causal_${h}_${L}.txt
  done
done
timeout 200 python3 bench/bench_fwd.py --hdims 64 128 --seqlens 512 1024 2048 4096 8192 16384 --masks full causal --impls dash fa3 cudnn $W --out /tmp/f > $OUT/fwd.txt 2>&1
echo "fwd rc=$? $(t)"; grep -E "^ *[0-9]+ +[0-9]+ |^hdim" $OUT/fwd.txt
