#!/bin/bash
# A/B: hdim 192 with two Q stages, one dO stage, one dS buffer (working tree) vs HEAD (one Q / dO stage, two dS buffers).
START=$(date +%s)
export CC=/usr/bin/gcc CXX=/usr/bin/g++ PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
rm -f dash/_C.abi3.so .ab/head/dash/_C.abi3.so; rm -rf build .ab/head/build
export DASH_INSTANTIATIONS='bwd_hdim192_*,fwd_hdim192_*'
(cd .ab/head && CUTLASS_PATH=$PWD/../../.site/cutlass/include MAX_JOBS=8 python3 setup.py build_ext --inplace > $OUT/build_head.log 2>&1; echo "head build rc=$?") &
CUTLASS_PATH=$PWD/.site/cutlass/include MAX_JOBS=8 python3 setup.py build_ext --inplace > $OUT/build.log 2>&1; echo "build rc=$? $(( $(date +%s)-START ))s"
wait; echo "t=$(( $(date +%s)-START ))s"
python3 tools/check_sass.py dash/_C.abi3.so > $OUT/sass.txt 2>&1; echo "sass rc=$?"; grep hdim192 $OUT/sass.txt | head -8
for round in 1 2; do
 for lib in new head; do
  if [ $lib = new ]; then D=$PWD; else D=$PWD/.ab/head; fi
  (cd $D && timeout 120 python3 bench/bench_bwd.py --hdim 192 --seqlen 2048 4096 8192 16384 --mask full causal --impl dash_det dash --warm-s 1 --min-s 0.5 > $OUT/bwd_${lib}_$round.txt 2>&1)
  echo "== $lib round $round t=$(( $(date +%s)-START ))s"; grep -E "^ +192 " $OUT/bwd_${lib}_$round.txt | tr -s ' ' | tr '\n' ';'; echo
 done
done
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/test_head_dims.py tests/test_determinism.py tests/test_softcap.py tests/test_window.py -k "hd192 and not hd192x128" > $OUT/t.txt 2>&1; echo "tests rc=$?: $(tail -1 $OUT/t.txt) t=$(( $(date +%s)-START ))s"
left=$(( 585 - ($(date +%s)-START) ))
PYTHONPATH=$PWD/.ab/fa3:$PWD timeout $left python3 bench/bench_bwd.py --hdim 192 --seqlen 2048 4096 8192 16384 --mask full causal --impl dash_det fa3 fa3_det cudnn --warm-s 1 --min-s 0.5 > $OUT/bwd_fa3.txt 2>&1
echo "fa3 rc=$? t=$(( $(date +%s)-START ))s"
cd $OUT && tar czf logs.tgz *.txt *.log && rm -f *.txt *.log
