#!/bin/bash
mkdir -p $OUT; ROOT=$PWD
for rep in 1 2; do for v in old head; do
  cd $ROOT/.ab/$v
  PYTHONPATH=. timeout 120 python3 bench/bench_bwd.py --hdim 256 --seqlen 4096 8192 --mask causal full --impl dash_det --warm-s 1 --min-s 0.5 --out /tmp/b_${v}_$rep > $OUT/b_${v}_$rep.log 2>&1
  grep -E "^ *256 +[0-9]+ +(causal|full)" $OUT/b_${v}_$rep.log | sed "s/^/$v r$rep /" >> $OUT/ab.txt
  cd $ROOT
done; done
for v in old head; do for m in causal full; do
  timeout 150 ncu --clock-control none --profile-from-start off -k regex:attn_bwd --metrics gpu__time_duration.sum,sm__inst_executed.sum,smsp__inst_executed.sum,regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio python3 .ab/prof_bwd.py 256 4096 $m $ROOT/.ab/$v > $OUT/ncu_${v}_$m.txt 2>&1
done; done
