#!/bin/bash
# default steady-state method (2 s untimed, >= 1 s timed), both impl orders
mkdir -p $OUT
for order in "dash cudnn" "cudnn dash"; do
  echo "== order: $order" >> $OUT/order2.txt
  timeout 200 python3 bench/bench_bwd.py --hdim 192 256 --seqlen 4096 8192 16384 --mask full causal --impl $order --out /tmp/bo 2>&1 | grep -E "hdim|^ *[0-9x]+ +[0-9]+ +(causal|full)" >> $OUT/order2.txt
done
echo "== window" >> $OUT/order2.txt
timeout 120 python3 bench/bench_bwd.py --hdim 64 128 --seqlen 16384 32768 --total-tokens 32768 --window 4096 --mask causal --impl dash_det flex --out /tmp/bw 2>&1 | grep -E "hdim|^ *[0-9x]+ +[0-9]+ +(causal|full)" >> $OUT/order2.txt
