#!/bin/bash
# Causal backward schedules now: diagonal (auto), descending, symmetric shift; traced and timed.
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
mkdir -p $OUT/bt
gunzip -c .ab/libs/btrace.so.gz > dash/_C.abi3.so
for s in descending symmetric_shift; do
  SCHED=$s CAUSALS=1 DETS=1 OUT=$OUT/bt timeout 150 python3 .ab/bt/bwd_trace_run.py >> $OUT/bt/run.txt 2>&1
done
python3 .ab/bt/bwd_trace_sum.py $OUT/bt > $OUT/bt/sum.txt 2>&1
gunzip -c .ab/libs/walk.so.gz > dash/_C.abi3.so
for hd in 128 64; do
  timeout 150 python3 bench/bench_bwd.py --hdim $hd --seqlen 2048 4096 8192 16384 --mask causal \
    --impl dash_det dash_det:descending dash_det:symmetric_shift dash --warm-s 1 --min-s 0.5 --out $OUT/o$hd > $OUT/bt/sched_$hd.txt 2>&1
done
cd $OUT && tar czf bt.tgz bt; ls -la $OUT
