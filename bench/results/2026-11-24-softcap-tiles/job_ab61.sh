#!/bin/bash
# A/B on the machine job_full61.sh left warm: the new library (ROOT) vs HEAD's (/tmp/base), hdim 64 / 128, plain and softcap 30
mkdir -p $OUT; ROOT=$PWD
ls -la dash/_C.abi3.so /tmp/base/dash/_C.abi3.so > $OUT/libs.txt
for rep in 1 2; do for v in new base; do for cap in 0 30; do
  if [ $v = base ]; then cd /tmp/base; else cd $ROOT; fi
  PYTHONPATH=. timeout 100 python3 bench/bench_bwd.py --hdim 64 128 --seqlen 4096 16384 --mask full causal --impl dash_det --softcap $cap --warm-s 1 --min-s 0.5 --out /tmp/b_${v}_$rep > $OUT/b_${v}_${cap}_$rep.log 2>&1
  grep -E "^ *[0-9x]+ +[0-9]+ +(causal|full)" $OUT/b_${v}_${cap}_$rep.log | sed "s/^/$v cap$cap r$rep /" >> $OUT/ab.txt
  cd $ROOT
done; done; done
