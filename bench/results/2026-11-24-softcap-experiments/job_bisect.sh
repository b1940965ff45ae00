#!/bin/bash
export CC=/usr/bin/gcc CXX=/usr/bin/g++
ROOT=$PWD; mkdir -p $OUT
VS="old bce282f 0006155 6089607"
for v in $VS; do
  rm -rf /tmp/$v; mkdir -p /tmp/$v; tar xf .site/v_$v.tar -C /tmp/$v
  (cd /tmp/$v && DASH_INSTANTIATIONS='bwd_hdim256_bf16_band,fwd_hdim256_bf16_band' CUTLASS_PATH=$ROOT/.site/cutlass/include MAX_JOBS=4 timeout 400 python3 setup.py build_ext --inplace > /tmp/build_$v.log 2>&1; echo "build $v rc $?" >> $OUT/bisect.txt) &
done
wait
for rep in 1 2; do for v in $VS; do
  cd /tmp/$v
  PYTHONPATH=. timeout 100 python3 bench/bench_bwd.py --hdim 256 --seqlen 4096 8192 --mask causal --impl dash_det --warm-s 1 --min-s 0.5 --out /tmp/b_${v}_$rep > /tmp/b_${v}_$rep.log 2>&1
  grep -E "^ *256 +[0-9]+ +causal" /tmp/b_${v}_$rep.log | sed "s/^/$v r$rep /" >> $OUT/bisect.txt
  cd $ROOT
done; done
