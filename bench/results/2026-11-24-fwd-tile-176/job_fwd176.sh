#!/bin/bash
# A/B forward hdim 128 tile 128x176 (working tree) vs 128x128 (HEAD copy in .ab/head): partial builds.
START=$(date +%s)
export CC=/usr/bin/gcc CXX=/usr/bin/g++ PATH=$PATH:/usr/local/cuda/bin
rm -f dash/_C.abi3.so .ab/head/dash/_C.abi3.so; rm -rf build .ab/head/build
export DASH_INSTANTIATIONS='fwd_hdim128_bf16_*,fwd_hdim128_fp16_*,bwd_hdim128_bf16_full'
(cd .ab/head && CUTLASS_PATH=$PWD/../../.site/cutlass/include MAX_JOBS=8 python3 setup.py build_ext --inplace > $OUT/build_head.log 2>&1; echo "head build rc=$?") &
CUTLASS_PATH=$PWD/.site/cutlass/include MAX_JOBS=8 python3 setup.py build_ext --inplace > $OUT/build.log 2>&1; echo "build rc=$? $(( $(date +%s)-START ))s"
wait; echo "t=$(( $(date +%s)-START ))s"
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_fwd.py -k "128 or strided or bitwise or softmax_scale or opcheck" > $OUT/t_fwd.txt 2>&1; echo "fwd tests rc=$?: $(tail -1 $OUT/t_fwd.txt)  t=$(( $(date +%s)-START ))s"
for round in 1 2; do
 for lib in new head; do
  if [ $lib = new ]; then D=$PWD; else D=$PWD/.ab/head; fi
  (cd $D && timeout 100 python3 bench/bench_fwd.py --hdims 128 --seqlens 2048 4096 8192 16384 --masks full causal --impls dash --warm-s 1 --min-s 0.5 > $OUT/fwd_${lib}_$round.txt 2>&1)
  echo "== $lib round $round t=$(( $(date +%s)-START ))s"; grep -E "^ +128 " $OUT/fwd_${lib}_$round.txt
 done
done
