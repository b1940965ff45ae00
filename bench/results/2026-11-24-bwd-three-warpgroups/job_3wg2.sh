#!/bin/bash
# A/B: new (192/192 as 3-WG kv_cols 64x96, 2-WG producer 32 regs / MMA 232) vs HEAD; then FA3 at 192x128 / 192.
START=$(date +%s)
export CC=/usr/bin/gcc CXX=/usr/bin/g++ CUTLASS_PATH=$PWD/.site/cutlass/include PATH=$PATH:/usr/local/cuda/bin
rm -f dash/_C.abi3.so .ab/head/dash/_C.abi3.so; rm -rf build .ab/head/build
(cd .ab/head && CUTLASS_PATH=$PWD/../../.site/cutlass/include DASH_INSTANTIATIONS='bwd_hdim128_bf16_full,bwd_hdim128_bf16_band,bwd_hdim64_bf16_full,bwd_hdim64_bf16_band,bwd_hdim192_bf16_full,bwd_hdim192_bf16_band,fwd_hdim128_bf16_*,fwd_hdim64_bf16_*,fwd_hdim192_bf16_*' MAX_JOBS=4 python3 setup.py build_ext --inplace > $OUT/build_head.log 2>&1; echo "head build rc=$?") &
MAX_JOBS=16 python3 setup.py build_ext --inplace > $OUT/build.log 2>&1; echo "build rc=$? $(( $(date +%s)-START ))s"
wait
python3 tools/check_sass.py dash/_C.abi3.so > $OUT/sass.txt 2>&1; echo "sass rc=$?"; grep -E "FAIL" $OUT/sass.txt | head; tail -1 $OUT/sass.txt
echo "t=$(( $(date +%s)-START ))s"
timeout 100 python3 -m pytest -q -p no:cacheprovider -x tests/test_head_dims.py -k "hd192-" > $OUT/t_hd.txt 2>&1; echo "hd192 tests rc=$?: $(tail -1 $OUT/t_hd.txt)  t=$(( $(date +%s)-START ))s"
for round in 1 2; do
 for lib in new head; do
  if [ $lib = new ]; then D=$PWD; else D=$PWD/.ab/head; fi
  (cd $D && timeout 100 python3 bench/bench_bwd.py --hdim 128 64 192 --seqlen 4096 16384 --mask full causal --impl dash_det --warm-s 1 --min-s 0.5 > $OUT/bench_${lib}_$round.txt 2>&1)
  echo "== $lib round $round t=$(( $(date +%s)-START ))s"
 done
done
left=$(( 590 - ($(date +%s)-START) ))
PYTHONPATH=$PWD/.ab/fa3:$PWD timeout $left python3 bench/bench_bwd.py --hdim 192x128 192 --seqlen 2048 4096 8192 16384 --mask causal full --impl dash_det fa3 fa3_det cudnn --warm-s 1 --min-s 0.5 > $OUT/bench_fa3.txt 2>&1
echo "fa3 rc=$? t=$(( $(date +%s)-START ))s"
