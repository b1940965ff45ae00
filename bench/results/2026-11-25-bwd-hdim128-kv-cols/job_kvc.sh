#!/bin/bash
# A/B: hdim 128 backward as "kv_cols" (S, dK^T, dV^T; P and dS through smem; one dQ buffer) in .ab/kvc vs "kv_rows" (working tree).
START=$(date +%s)
export CC=/usr/bin/gcc CXX=/usr/bin/g++ PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
rm -f dash/_C.abi3.so .ab/kvc/dash/_C.abi3.so; rm -rf build .ab/kvc/build
export DASH_INSTANTIATIONS='bwd_hdim128_bf16_full,bwd_hdim128_bf16_band,fwd_hdim128_bf16_*'
(cd .ab/kvc && CUTLASS_PATH=$PWD/../../.site/cutlass/include MAX_JOBS=8 python3 setup.py build_ext --inplace > $OUT/build_kvc.log 2>&1; echo "kvc build rc=$?") &
CUTLASS_PATH=$PWD/.site/cutlass/include MAX_JOBS=8 python3 setup.py build_ext --inplace > $OUT/build.log 2>&1; echo "build rc=$? $(( $(date +%s)-START ))s"
wait; echo "t=$(( $(date +%s)-START ))s"
(cd .ab/kvc && python3 tools/check_sass.py dash/_C.abi3.so > $OUT/sass_kvc.txt 2>&1; grep hdim128 $OUT/sass_kvc.txt)
(cd .ab/kvc && timeout 100 python3 -m pytest -q -p no:cacheprovider -x tests/test_bwd_correctness.py tests/test_determinism.py -k "128 and not fp16 and not float16" > $OUT/t_kvc.txt 2>&1; echo "kvc tests rc=$?: $(tail -1 $OUT/t_kvc.txt) t=$(( $(date +%s)-START ))s")
for round in 1 2; do
 for lib in rows kvc; do
  if [ $lib = rows ]; then D=$PWD; else D=$PWD/.ab/kvc; fi
  (cd $D && timeout 120 python3 bench/bench_bwd.py --hdim 128 --seqlen 2048 4096 8192 16384 --mask full causal --impl dash_det dash --warm-s 1 --min-s 0.5 > $OUT/bwd_${lib}_$round.txt 2>&1)
  echo "== $lib round $round t=$(( $(date +%s)-START ))s"; grep -E "^ +128 " $OUT/bwd_${lib}_$round.txt | tr -s ' ' | tr '\n' ';'; echo
 done
done
cd $OUT && tar czf logs.tgz *.txt *.log && rm -f *.txt *.log
