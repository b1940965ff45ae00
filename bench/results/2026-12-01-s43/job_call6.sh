#!/bin/bash
# Session 43, call 6: issue 13's cuDNN bar at 192 / 128 and 192 causal (non-det >= 1.0x cuDNN from 4k; item 187's
# job read 192 / 128 causal 16k 0.986, the next 1.032), on land41: three processes, the order of dash and cuDNN
# alternating (dash first, cuDNN first, dash first), det beside.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/land41.so.gz > dash/_C.abi3.so
B="bench/bench_bwd.py --hdim 192x128 192 --seqlen 4096 8192 16384 --mask causal --warm-s 1 --min-s 0.5"
python3 $B --impl dash dash_det cudnn > $OUT/p1_dash_first.txt 2>&1; echo "p1 at $(t)"; grep -E "^ *192" $OUT/p1_dash_first.txt
python3 $B --impl cudnn dash dash_det > $OUT/p2_cudnn_first.txt 2>&1; echo "p2 at $(t)"; grep -E "^ *192" $OUT/p2_cudnn_first.txt
python3 $B --impl dash dash_det cudnn > $OUT/p3_dash_first.txt 2>&1; echo "p3 at $(t)"; grep -E "^ *192" $OUT/p3_dash_first.txt
