#!/bin/bash
# 256 causal: item 47's commit (2bbf1a8) against HEAD, same job.
export CC=/usr/bin/gcc CXX=/usr/bin/g++
ROOT=$PWD; mkdir -p $OUT
for v in old new; do
  rm -rf /tmp/$v; mkdir -p /tmp/$v; tar xf .site/v_$v.tar -C /tmp/$v
  (cd /tmp/$v && DASH_INSTANTIATIONS='bwd_hdim256_bf16_band,fwd_hdim256_bf16_band,bwd_hdim256_bf16_full,fwd_hdim256_bf16_full' CUTLASS_PATH=$ROOT/.site/cutlass/include MAX_JOBS=8 timeout 400 python3 setup.py build_ext --inplace > /tmp/build_$v.log 2>&1; echo "build $v rc $?" >> $OUT/reg.txt) &
done
wait
for rep in 1 2; do for v in old new; do
  cd /tmp/$v
  PYTHONPATH=. timeout 100 python3 bench/bench_bwd.py --hdim 256 --seqlen 4096 8192 --mask causal full --impl dash dash_det --out /tmp/r_${v}_$rep > /tmp/r_${v}_$rep.log 2>&1
  grep -E "^ *256 +[0-9]+ +(full|causal)" /tmp/r_${v}_$rep.log | sed "s/^/$v r$rep /" >> $OUT/reg.txt
  cd $ROOT
done; done
grep -m1 "hdim" /tmp/r_old_1.log >> $OUT/reg.txt
