#!/bin/bash
# Issue 13 re-measure under the invariant default: big head dims vs cuDNN (build first if needed).
START=$(date +%s)
export CC=/usr/bin/gcc CXX=/usr/bin/g++ CUTLASS_PATH=$PWD/.site/cutlass/include PATH=$PATH:/usr/local/cuda/bin
if [ ! -f dash/_C.abi3.so ]; then MAX_JOBS=16 python3 setup.py build_ext --inplace > $OUT/build.log 2>&1; echo "build rc=$? $(( $(date +%s)-START ))s"; fi
python3 bench/bench_bwd.py --hdim 192x128 256 192 96 --seqlen 4096 8192 16384 --mask full causal --impl dash_det dash cudnn --out $OUT/hd > $OUT/hd.txt 2>&1
grep -E "^ +[0-9x]+ +[0-9]+ " $OUT/hd.txt; echo "t=$(( $(date +%s)-START ))s"
python3 bench/bench_bwd.py --hdim 192x128 --seqlen 4096 16384 --mask causal --impl dash_det:descending dash_det --out $OUT/hd2 > $OUT/hd2.txt 2>&1
grep -E "^ +[0-9x]+ +[0-9]+ " $OUT/hd2.txt; echo "t=$(( $(date +%s)-START ))s"
