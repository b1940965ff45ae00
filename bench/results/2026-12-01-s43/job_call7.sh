#!/bin/bash
# Session 43, call 7: the non-deterministic causal order at 192 / 128 and 192, 8k-16k (item 307: non-det level with
# cuDNN at 192 / 128 causal 16k). `auto` (ascending, longest first in L2 sections) against the grid-dependent
# orders a non-det call may use (symmetric shift in static rounds, descending) and cuDNN; two processes, the
# order of implementations reversed in the second. land41.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/land41.so.gz > dash/_C.abi3.so
B="bench/bench_bwd.py --hdim 192x128 192 --seqlen 8192 16384 --mask causal --warm-s 1 --min-s 0.5"
python3 $B --impl dash dash:symmetric_shift dash:descending cudnn > $OUT/p1.txt 2>&1; echo "p1 at $(t)"; grep -E "hdim|^ *192" $OUT/p1.txt
python3 $B --impl cudnn dash:descending dash:symmetric_shift dash > $OUT/p2.txt 2>&1; echo "p2 at $(t)"; grep -E "hdim|^ *192" $OUT/p2.txt
