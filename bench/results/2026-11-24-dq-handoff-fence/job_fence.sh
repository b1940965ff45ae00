#!/bin/bash
# A/B: dQ hand-off proxy fence after the dK GEMM wait (working tree) vs HEAD (.ab/head); hdim 64/128 bf16 only.
START=$(date +%s)
export CC=/usr/bin/gcc CXX=/usr/bin/g++ PATH=$PATH:/usr/local/cuda/bin
rm -f dash/_C.abi3.so .ab/head/dash/_C.abi3.so; rm -rf build .ab/head/build
export DASH_INSTANTIATIONS='bwd_hdim64_bf16_*,bwd_hdim128_bf16_*,fwd_hdim64_bf16_*,fwd_hdim128_bf16_*'
(cd .ab/head && CUTLASS_PATH=$PWD/../../.site/cutlass/include MAX_JOBS=8 python3 setup.py build_ext --inplace > $OUT/build_head.log 2>&1; echo "head build rc=$?") &
CUTLASS_PATH=$PWD/.site/cutlass/include MAX_JOBS=8 python3 setup.py build_ext --inplace > $OUT/build.log 2>&1; echo "build rc=$? $(( $(date +%s)-START ))s"
wait; echo "t=$(( $(date +%s)-START ))s"
for round in 1 2; do
 for lib in new head; do
  if [ $lib = new ]; then D=$PWD; else D=$PWD/.ab/head; fi
  (cd $D && timeout 100 python3 bench/bench_bwd.py --hdim 64 128 --seqlen 4096 16384 --mask full causal --impl dash_det --warm-s 1 --min-s 0.5 > $OUT/bwd_${lib}_$round.txt 2>&1)
  echo "== $lib round $round t=$(( $(date +%s)-START ))s"; grep -E "^ +(64|128) " $OUT/bwd_${lib}_$round.txt | tr -s ' ' | tr '\n' ';'; echo
 done
done
timeout 100 python3 -m pytest -q -p no:cacheprovider tests/test_determinism.py tests/test_bwd_correctness.py > $OUT/t.txt 2>&1; echo "tests rc=$?: $(tail -1 $OUT/t.txt) t=$(( $(date +%s)-START ))s"
