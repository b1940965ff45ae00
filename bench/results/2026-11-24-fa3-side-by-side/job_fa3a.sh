#!/bin/bash
# Issue 15, measure first: upstream FA3 beside dash, backward 2k-16k (build first if needed).
START=$(date +%s)
export PYTHONPATH=$PWD/.ab/fa3 CC=/usr/bin/gcc CXX=/usr/bin/g++ CUTLASS_PATH=$PWD/.site/cutlass/include PATH=$PATH:/usr/local/cuda/bin
if [ ! -f dash/_C.abi3.so ]; then MAX_JOBS=16 python3 setup.py build_ext --inplace > $OUT/build.log 2>&1; echo "build rc=$? $(( $(date +%s)-START ))s"; fi
python3 .ab/fa3_check.py > $OUT/fa3_check.txt 2>&1; tail -5 $OUT/fa3_check.txt
r() { n=$1; shift; python3 bench/bench_bwd.py "$@" --out $OUT/$n > $OUT/$n.txt 2>&1; grep -E "^ *[0-9x]+ +[0-9]+ +(full|causal)|hdim seqlen|failed" $OUT/$n.txt; echo "$n t=$(( $(date +%s)-START ))s"; }
r bwd128 --hdim 128 --seqlen 2048 4096 8192 16384 --mask full causal --impl dash_det dash fa3_det fa3
r bwd64 --hdim 64 --seqlen 2048 4096 8192 16384 --mask full causal --impl dash_det dash fa3_det fa3
