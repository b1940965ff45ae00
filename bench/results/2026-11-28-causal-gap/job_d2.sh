#!/bin/bash
# Kernel-by-kernel breakdown of the causal backward beside FA3 (issue 15): main kernel against
# pre / postprocess, hdim 64 and 128, causal 4k and 16k, and full 16k for reference. f155 library, H200.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
gunzip -c .ab/libs/f155.so.gz > dash/_C.abi3.so
export PYTHONPATH=$PWD/.ab/fa3:$PYTHONPATH
for h in 64 128; do
  timeout 150 python3 bench/kernel_breakdown.py --hdim $h --seqlen 4096 16384 --mask causal --impl dash_det dash fa3_det fa3 --calls 20 --warm-s 1 > $OUT/kb_causal_$h.txt 2>&1
  echo "== $h causal rc=$? $(t)"; cat $OUT/kb_causal_$h.txt | grep -v "^$" | tail -60
  timeout 80 python3 bench/kernel_breakdown.py --hdim $h --seqlen 16384 --mask full --impl dash_det fa3 --calls 20 --warm-s 1 > $OUT/kb_full_$h.txt 2>&1
  echo "== $h full rc=$? $(t)"; cat $OUT/kb_full_$h.txt | grep -v "^$" | tail -30
done
