#!/bin/bash
mkdir -p $OUT; ROOT=$PWD
# epilogue upper bound: no dK/dV stores (noepi) vs the new library, causal 128 / 192x128 / 256
for rep in 1 2; do for v in new noepi; do
  if [ $v = new ]; then cd $ROOT; else cd $ROOT/.ab/noepi; fi
  PYTHONPATH=. timeout 100 python3 bench/bench_bwd.py --hdim 128 192x128 256 --seqlen 4096 16384 --mask causal --impl dash_det --warm-s 1 --min-s 0.5 --out /tmp/e_${v}_$rep > $OUT/e_${v}_$rep.log 2>&1
  grep -E "^ *[0-9x]+ +[0-9]+ +(causal|full)" $OUT/e_${v}_$rep.log | sed "s/^/$v r$rep /" >> $OUT/epi.txt
  cd $ROOT
done; done
T0=$(date +%s)
timeout 100 python3 -m pytest -q -p no:cacheprovider tests/test_head_dims.py -rs > $OUT/test_head_dims.log 2>&1; echo "head_dims rc $? $(( $(date +%s) - T0 ))s" >> $OUT/tests.txt; tail -2 $OUT/test_head_dims.log >> $OUT/tests.txt
T0=$(date +%s)
timeout 240 python3 -m pytest -q -p no:cacheprovider tests --deselect tests/test_schedule_model.py --ignore=tests/test_head_dims.py -rs > $OUT/suite.log 2>&1; echo "suite rc $? $(( $(date +%s) - T0 ))s" >> $OUT/tests.txt; tail -3 $OUT/suite.log >> $OUT/tests.txt
timeout 100 python3 bench/bench_bwd.py --hdim 256 --seqlen 2048 4096 8192 16384 --mask causal --impl dash_det dash cudnn flex --warm-s 1 --min-s 0.5 --out /tmp/b256 > $OUT/bench256_causal.log 2>&1
