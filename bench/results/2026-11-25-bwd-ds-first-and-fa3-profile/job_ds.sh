#!/bin/bash
# A/B: 192/128 backward with two dS buffers and one dO stage (.ab/dsfirst) vs two dO stages and one dS buffer (working tree);
# then Nsight Compute per-instruction stall samples of FA3's hdim 64 causal 16k backward (non-det).
START=$(date +%s)
export CC=/usr/bin/gcc CXX=/usr/bin/g++ PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
rm -f dash/_C.abi3.so .ab/dsfirst/dash/_C.abi3.so; rm -rf build .ab/dsfirst/build
export DASH_INSTANTIATIONS='bwd_hdim192x128_bf16_full,bwd_hdim192x128_bf16_band,fwd_hdim192x128_bf16_*,bwd_hdim64_bf16_band,fwd_hdim64_bf16_band'
(cd .ab/dsfirst && CUTLASS_PATH=$PWD/../../.site/cutlass/include MAX_JOBS=8 python3 setup.py build_ext --inplace > $OUT/build_ds.log 2>&1; echo "ds build rc=$?") &
CUTLASS_PATH=$PWD/.site/cutlass/include MAX_JOBS=8 python3 setup.py build_ext --inplace > $OUT/build.log 2>&1; echo "build rc=$? $(( $(date +%s)-START ))s"
wait; echo "t=$(( $(date +%s)-START ))s"
(cd .ab/dsfirst && python3 tools/check_sass.py dash/_C.abi3.so > $OUT/sass_ds.txt 2>&1; grep "hdim192x128 bf16" $OUT/sass_ds.txt)
(cd .ab/dsfirst && timeout 100 python3 -m pytest -q -p no:cacheprovider tests/test_head_dims.py tests/test_determinism.py -k "hd192x128 and not fp16" > $OUT/t_ds.txt 2>&1; echo "ds tests rc=$?: $(tail -1 $OUT/t_ds.txt) t=$(( $(date +%s)-START ))s")
for round in 1 2; do
 for lib in do2 ds2; do
  if [ $lib = do2 ]; then D=$PWD; else D=$PWD/.ab/dsfirst; fi
  (cd $D && timeout 120 python3 bench/bench_bwd.py --hdim 192x128 --seqlen 2048 4096 8192 16384 --mask full causal --impl dash_det dash --warm-s 1 --min-s 0.5 > $OUT/bwd_${lib}_$round.txt 2>&1)
  echo "== $lib round $round t=$(( $(date +%s)-START ))s"; grep -E "^ +192x128 " $OUT/bwd_${lib}_$round.txt | tr -s ' ' | tr '\n' ';'; echo
 done
done
timeout 150 ncu --clock-control none --profile-from-start off --kernel-name-base demangled -k regex:FlashAttnBwdSm90 --section SourceCounters --section WarpStateStats --import-source no -o $OUT/fa3_64 env PYTHONPATH=$PWD/.ab/fa3:$PWD python3 tools/profile_bwd.py --impl fa3 --hdim 64 --causal > $OUT/ncu_fa3.log 2>&1; echo "ncu rc=$? t=$(( $(date +%s)-START ))s"
ncu --import $OUT/fa3_64.ncu-rep --page source --csv --print-source sass > $OUT/src_fa3_64.csv 2> $OUT/src_fa3.err; echo "src rc=$? $(wc -l < $OUT/src_fa3_64.csv) lines t=$(( $(date +%s)-START ))s"
cd $OUT && gzip -f src_fa3_64.csv && rm -f fa3_64.ncu-rep && tar czf logs.tgz *.txt *.log *.err && rm -f *.txt *.log *.err; ls -la
