#!/bin/bash
# 3-warpgroup 192x128 backward: build (new: all; HEAD: 192x128 bf16 only, in .ab/head), tests, A/B bench.
START=$(date +%s)
export CC=/usr/bin/gcc CXX=/usr/bin/g++ CUTLASS_PATH=$PWD/.site/cutlass/include PATH=$PATH:/usr/local/cuda/bin
if [ ! -f dash/_C.abi3.so ]; then
  (cd .ab/head && CUTLASS_PATH=$PWD/../../.site/cutlass/include DASH_INSTANTIATIONS='*hdim192x128_bf16*' MAX_JOBS=6 python3 setup.py build_ext --inplace > $OUT/build_head.log 2>&1; echo "head build rc=$?") &
  MAX_JOBS=14 python3 setup.py build_ext --inplace > $OUT/build.log 2>&1; echo "build rc=$? $(( $(date +%s)-START ))s"
  wait
  python3 tools/check_sass.py dash/_C.abi3.so > $OUT/sass.txt 2>&1; echo "sass rc=$?"; grep -E "192x128|FAIL" $OUT/sass.txt | head; tail -1 $OUT/sass.txt
fi
echo "t=$(( $(date +%s)-START ))s"
timeout 200 python3 -m pytest -q -p no:cacheprovider -x tests/test_head_dims.py -k "192x128" > $OUT/t_hd.txt 2>&1; echo "hd192x128 tests rc=$?: $(tail -1 $OUT/t_hd.txt)  t=$(( $(date +%s)-START ))s"
for round in 1 2; do
 for lib in new head; do
  if [ $lib = new ]; then D=$PWD; else D=$PWD/.ab/head; fi
  (cd $D && timeout 120 python3 bench/bench_bwd.py --hdim 192x128 --seqlen 2048 4096 8192 16384 --mask full causal --impl dash_det dash --warm-s 1 --min-s 0.5 > $OUT/bench_${lib}_$round.txt 2>&1)
  echo "== $lib round $round t=$(( $(date +%s)-START ))s"; grep -E "^\|" $OUT/bench_${lib}_$round.txt | head -14
 done
done
