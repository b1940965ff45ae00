#!/bin/bash
# job_f3 found the first implementation of a process 2.5-4% faster than the second with
# `--warm-s 1 --min-s 0.5` (192 full, groups of 4, H100). job_f3 again with bench_bwd's settle
# run (SETTLE_S: 2 s of the first implementation, untimed, after each problem's setup; item 156).
START=$(date +%s)
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/f155.so.gz > dash/_C.abi3.so
W="--warm-s 1 --min-s 0.5 --out /tmp/bo"
for r in 1 2; do
  for order in "dash dash_det" "dash_det dash"; do
    timeout 30 python3 bench/bench_bwd.py $W --hdim 192 --hidden 3072 --heads-kv 4 --seqlen 2048 4096 --mask full --impl $order > $OUT/settle_r${r}_${order// /_}.txt 2>&1
    echo "== r$r $order"; grep -E "^ *[0-9x]+ +[0-9]+ |^hdim" $OUT/settle_r${r}_${order// /_}.txt
  done
done
echo "all done at $(( $(date +%s) - START ))s"
