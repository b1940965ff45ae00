#!/bin/bash
# Experiment: hdim 64 backward with 64 x 128 tiles (as 96 / 128) vs the current 128 x 128, plain and softcap 30
export CC=/usr/bin/gcc CXX=/usr/bin/g++ CUTLASS_PATH=$PWD/.site/cutlass/include
mkdir -p $OUT; ROOT=$PWD
rm -rf /tmp/t64; mkdir -p /tmp/t64; tar xf .ab/t64.tar -C /tmp/t64
U=$(for m in band full; do printf "bwd_hdim64_bf16_$m,bwd_hdim64_bf16_${m}_softcap,fwd_hdim64_bf16_$m,"; done)
T0=$(date +%s)
(cd /tmp/t64 && DASH_INSTANTIATIONS="${U%,}" MAX_JOBS=16 timeout 300 python3 setup.py build_ext --inplace > /tmp/build_t64.log 2>&1; echo "build rc $? $(( $(date +%s) - T0 ))s" >> $OUT/ab.txt)
grep -iE 'error|spill' /tmp/build_t64.log | head -20 > $OUT/build_errs.txt
export PATH=$PATH:/usr/local/cuda/bin:$(python3 -c "import triton,os;print(os.path.dirname(triton.__file__)+'/backends/nvidia/bin')")
python3 tools/check_sass.py /tmp/t64/dash/_C.abi3.so > $OUT/check_sass_t64.txt 2>&1
DUMP_HD=64x64 PYTHONPATH=. timeout 60 python3 .ab/dump_grads.py /tmp/g_base.pt > $OUT/dump_base.log 2>&1
(cd /tmp/t64 && DUMP_HD=64x64 PYTHONPATH=. timeout 60 python3 $ROOT/.ab/dump_grads.py /tmp/g_t64.pt > $OUT/dump_t64.log 2>&1)
python3 .ab/close_grads.py /tmp/g_base.pt /tmp/g_t64.pt > $OUT/close.txt 2>&1
DUMP_SOFTCAP=30 DUMP_HD=64x64 PYTHONPATH=. timeout 60 python3 .ab/dump_grads.py /tmp/gc_base.pt > $OUT/dumpc_base.log 2>&1
(cd /tmp/t64 && DUMP_SOFTCAP=30 DUMP_HD=64x64 PYTHONPATH=. timeout 60 python3 $ROOT/.ab/dump_grads.py /tmp/gc_t64.pt > $OUT/dumpc_t64.log 2>&1)
python3 .ab/close_grads.py /tmp/gc_base.pt /tmp/gc_t64.pt >> $OUT/close.txt 2>&1
for rep in 1 2; do for v in t64 base; do for cap in 0 30; do
  if [ $v = base ]; then cd $ROOT; else cd /tmp/t64; fi
  PYTHONPATH=. timeout 100 python3 bench/bench_bwd.py --hdim 64 --seqlen 4096 16384 --mask full causal --impl dash_det dash --softcap $cap --warm-s 1 --min-s 0.5 --out /tmp/b_${v}_$rep > $OUT/b_${v}_${cap}_$rep.log 2>&1
  grep -E "^ *[0-9x]+ +[0-9]+ +(causal|full)" $OUT/b_${v}_${cap}_$rep.log | sed "s/^/$v cap$cap r$rep /" >> $OUT/ab.txt
  cd $ROOT
done; done; done
