#!/bin/bash
# Issue 15 (second call): forward grid, short backward, 192/128 beside FA3.
START=$(date +%s)
export PYTHONPATH=$PWD/.ab/fa3 CC=/usr/bin/gcc CXX=/usr/bin/g++ CUTLASS_PATH=$PWD/.site/cutlass/include PATH=$PATH:/usr/local/cuda/bin
if [ ! -f dash/_C.abi3.so ]; then MAX_JOBS=16 python3 setup.py build_ext --inplace > $OUT/build.log 2>&1; echo "build rc=$? $(( $(date +%s)-START ))s"; fi
python3 bench/bench_fwd.py --hdims 128 64 --masks full causal --impls dash fa3 --out $OUT/fwd > $OUT/fwd.txt 2>&1; grep "^|" $OUT/fwd.txt | tail -26; echo "fwd t=$(( $(date +%s)-START ))s"
r() { n=$1; shift; python3 bench/bench_bwd.py "$@" --out $OUT/$n > $OUT/$n.txt 2>&1; grep -E "^ *[0-9x]+ +[0-9]+ +(full|causal)|hdim seqlen|failed" $OUT/$n.txt; echo "$n t=$(( $(date +%s)-START ))s"; }
r bwd192 --hdim 192x128 --seqlen 4096 16384 --mask full causal --impl dash_det fa3_det fa3
python3 bench/bench_fwd.py --hdims 192x128 --seqlens 4096 16384 --masks full causal --impls dash fa3 --out $OUT/fwd192 > $OUT/fwd192.txt 2>&1; grep "^|" $OUT/fwd192.txt | tail -6; echo "fwd192 t=$(( $(date +%s)-START ))s"
r bwdshort --hdim 128 64 --seqlen 512 1024 --mask full causal --impl dash_det dash fa3_det fa3
