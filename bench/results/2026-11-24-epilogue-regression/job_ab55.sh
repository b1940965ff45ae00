#!/bin/bash
# A/B: HEAD (built here, bf16 plain units of 64/128/192/256) vs the working tree's library
export CC=/usr/bin/gcc CXX=/usr/bin/g++ CUTLASS_PATH=$PWD/.site/cutlass/include
mkdir -p $OUT; ROOT=$PWD
rm -rf /tmp/head; mkdir -p /tmp/head; tar xf .ab/v_head.tar -C /tmp/head
U=$(for h in 64 128 192 256; do for m in band full; do printf "bwd_hdim${h}_bf16_$m,fwd_hdim${h}_bf16_$m,"; done; done)
T0=$(date +%s)
(cd /tmp/head && DASH_INSTANTIATIONS="${U%,}" MAX_JOBS=16 timeout 330 python3 setup.py build_ext --inplace > /tmp/build_head.log 2>&1; echo "build rc $? $(( $(date +%s) - T0 ))s" >> $OUT/ab.txt)
tail -3 /tmp/build_head.log > $OUT/build_tail.txt
for rep in 1 2; do for v in new head; do
  if [ $v = new ]; then cd $ROOT; else cd /tmp/head; fi
  PYTHONPATH=. timeout 100 python3 bench/bench_bwd.py --hdim 64 128 192 256 --seqlen 4096 16384 --mask full causal --impl dash_det --warm-s 1 --min-s 0.5 --out /tmp/b_${v}_$rep > $OUT/b_${v}_$rep.log 2>&1
  grep -E "^ *[0-9]+ +[0-9]+ +(causal|full)" $OUT/b_${v}_$rep.log | sed "s/^/$v r$rep /" >> $OUT/ab.txt
  cd $ROOT
done; done
