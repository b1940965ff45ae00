#!/bin/bash
# A/B: the backward's P pass with the exponentials in a pass of their own (.ab/ex2) vs HEAD (working tree); hdim 64 / 128 bf16.
START=$(date +%s)
export CC=/usr/bin/gcc CXX=/usr/bin/g++ PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
rm -f dash/_C.abi3.so .ab/ex2/dash/_C.abi3.so; rm -rf build .ab/ex2/build
export DASH_INSTANTIATIONS='bwd_hdim64_bf16_full,bwd_hdim64_bf16_band,bwd_hdim128_bf16_full,bwd_hdim128_bf16_band,fwd_hdim64_bf16_*,fwd_hdim128_bf16_*'
(cd .ab/ex2 && CUTLASS_PATH=$PWD/../../.site/cutlass/include MAX_JOBS=8 python3 setup.py build_ext --inplace > $OUT/build_ex2.log 2>&1; echo "ex2 build rc=$?") &
CUTLASS_PATH=$PWD/.site/cutlass/include MAX_JOBS=8 python3 setup.py build_ext --inplace > $OUT/build.log 2>&1; echo "build rc=$? $(( $(date +%s)-START ))s"
wait; echo "t=$(( $(date +%s)-START ))s"
(cd .ab/ex2 && python3 tools/check_sass.py dash/_C.abi3.so > $OUT/sass_ex2.txt 2>&1; grep "bwd hdim" $OUT/sass_ex2.txt)
python3 tools/check_sass.py dash/_C.abi3.so > $OUT/sass_head.txt 2>&1; grep "bwd hdim" $OUT/sass_head.txt
(cd .ab/ex2 && timeout 100 python3 -m pytest -q -p no:cacheprovider tests/test_bwd_correctness.py tests/test_determinism.py -k "not fp16 and not float16 and not 96 and not 192 and not 256" > $OUT/t_ex2.txt 2>&1; echo "ex2 tests rc=$?: $(tail -1 $OUT/t_ex2.txt) t=$(( $(date +%s)-START ))s")
for round in 1 2; do
 for lib in head ex2; do
  if [ $lib = head ]; then D=$PWD; else D=$PWD/.ab/ex2; fi
  (cd $D && timeout 120 python3 bench/bench_bwd.py --hdim 64 128 --seqlen 4096 16384 --mask full causal --impl dash_det --warm-s 1 --min-s 0.5 > $OUT/bwd_${lib}_$round.txt 2>&1)
  echo "== $lib round $round t=$(( $(date +%s)-START ))s"; grep -E "^ +(64|128) " $OUT/bwd_${lib}_$round.txt | tr -s ' ' | tr '\n' ';'; echo
 done
done
cd $OUT && tar czf logs.tgz *.txt *.log && rm -f *.txt *.log
