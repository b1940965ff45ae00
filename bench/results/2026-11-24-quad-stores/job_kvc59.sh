#!/bin/bash
# A/B: quad-transposed 16-byte dK/dV stores (working tree source, built here) vs the committed library (carried)
export CC=/usr/bin/gcc CXX=/usr/bin/g++ CUTLASS_PATH=$PWD/.site/cutlass/include
mkdir -p $OUT; ROOT=$PWD
rm -rf /tmp/quad; mkdir -p /tmp/quad
for f in *; do [ "$f" != dash ] && cp -r "$f" /tmp/quad/; done
mkdir /tmp/quad/dash; cp dash/*.py /tmp/quad/dash/
U=$(for h in 192x128; do for m in band full; do printf "bwd_hdim${h}_bf16_$m,fwd_hdim${h}_bf16_$m,"; done; done)
T0=$(date +%s)
(cd /tmp/quad && DASH_INSTANTIATIONS="${U%,}" MAX_JOBS=16 timeout 300 python3 setup.py build_ext --inplace > /tmp/build_quad.log 2>&1; echo "build rc $? $(( $(date +%s) - T0 ))s" >> $OUT/ab.txt)
tail -3 /tmp/build_quad.log > $OUT/build_tail.txt
DUMP_HD=192x128 PYTHONPATH=. timeout 60 python3 .ab/dump_grads.py /tmp/g_base.pt > $OUT/dump_base.log 2>&1
(cd /tmp/quad && DUMP_HD=192x128 PYTHONPATH=. timeout 60 python3 $ROOT/.ab/dump_grads.py /tmp/g_quad.pt > $OUT/dump_quad.log 2>&1)
python3 .ab/cmp_grads.py /tmp/g_base.pt /tmp/g_quad.pt > $OUT/cmp.txt 2>&1
for rep in 1 2; do for v in quad base; do
  if [ $v = base ]; then cd $ROOT; else cd /tmp/quad; fi
  PYTHONPATH=. timeout 110 python3 bench/bench_bwd.py --hdim 192x128 --seqlen 4096 16384 --mask full causal --impl dash_det --warm-s 1 --min-s 0.5 --out /tmp/b_${v}_$rep > $OUT/b_${v}_$rep.log 2>&1
  grep -E "^ *[0-9x]+ +[0-9]+ +(causal|full)" $OUT/b_${v}_$rep.log | sed "s/^/$v r$rep /" >> $OUT/ab.txt
  cd $ROOT
done; done
