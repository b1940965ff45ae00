#!/bin/bash
# Load balance of the causal backward: the usual grid (hidden 2048) against 8x the heads
# (hidden 16384, the tail's share 1/8), dash det (diagonal), non-det (symmetric shift),
# det ascending (longest first), FA3 non-det; then the forward row-mask A/B.
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
mkdir -p $OUT/lb
gunzip -c .ab/libs/walk.so.gz > dash/_C.abi3.so
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv > $OUT/lb/smi0.txt
for hid in 2048 16384; do
  for hd in 128 64; do
    PYTHONPATH=$PWD/.ab/fa3:$PWD timeout 200 python3 bench/bench_bwd.py --hdim $hd --seqlen 4096 16384 --mask causal full \
      --hidden $hid --impl dash_det dash dash_det:ascending fa3 --warm-s 1 --min-s 0.5 --out $OUT/lb/o_${hd}_${hid} \
      > $OUT/lb/bwd_${hd}_${hid}.txt 2>&1
  done
done
LIBS='.ab/libs/walk.so.gz .ab/libs/rm.so.gz' ROUNDS=2 OUT=$OUT/ab \
  BENCH='bench/bench_fwd.py --hdims 128 64 --seqlens 2048 4096 16384 --masks causal --impls dash --warm-s 1 --min-s 0.5' \
  timeout 240 bash bench/ab_job.sh > $OUT/ab_job.log 2>&1
gunzip -c .ab/libs/walk.so.gz > dash/_C.abi3.so; python3 .ab/lb/rm_check.py /tmp/ref.pt > $OUT/lb/rm_check.txt 2>&1
gunzip -c .ab/libs/rm.so.gz > dash/_C.abi3.so; python3 .ab/lb/rm_check.py /tmp/x.pt /tmp/ref.pt >> $OUT/lb/rm_check.txt 2>&1
cd $OUT && tar czf lb.tgz lb ab ab_job.log 2>/dev/null; ls -la $OUT
