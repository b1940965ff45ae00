#!/bin/bash
# Backward trace (hdim 128 / 64, full / causal, det / non-det).
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
mkdir -p $OUT/bt
gunzip -c .ab/libs/btrace.so.gz > dash/_C.abi3.so
OUT=$OUT/bt timeout 400 python3 .ab/bt/bwd_trace_run.py > $OUT/bt/run.txt 2>&1
python3 .ab/bt/bwd_trace_sum.py $OUT/bt > $OUT/bt/sum.txt 2>&1
cd $OUT && tar czf bt.tgz bt; ls -la $OUT
