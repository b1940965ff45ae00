#!/bin/bash
# descending vs diagonal (both grid-invariant) on bands, every head dim; GQA/MQA; window.
START=$(date +%s)
export CC=/usr/bin/gcc CXX=/usr/bin/g++ CUTLASS_PATH=$PWD/.site/cutlass/include PATH=$PATH:/usr/local/cuda/bin
if [ ! -f dash/_C.abi3.so ]; then MAX_JOBS=16 python3 setup.py build_ext --inplace > $OUT/build.log 2>&1; echo "build rc=$? $(( $(date +%s)-START ))s"; fi
B="python3 bench/bench_bwd.py --mask causal"
r() { n=$1; shift; $B "$@" --out $OUT/$n > $OUT/$n.txt 2>&1; grep -E "^ +[0-9x]+ +[0-9]+ |hdim seqlen" $OUT/$n.txt; echo "$n t=$(( $(date +%s)-START ))s"; }
r hd --hdim 192x128 256 192 128 96 64 --seqlen 2048 4096 16384 --impl dash_det:descending dash_det
r llama --hdim 128 --heads-kv 8 --hidden 4096 --seqlen 2048 4096 8192 --impl dash_det:descending dash_det
r mqa --hdim 128 --heads-kv 1 --hidden 2048 --seqlen 16384 --impl dash_det:descending dash_det
r win --hdim 128 --seqlen 16384 --total-tokens 32768 --window 4096 --impl dash_det:descending dash_det
r hd_r2 --hdim 192x128 256 192 --seqlen 2048 4096 16384 --impl dash_det dash_det:descending
r llama_r2 --hdim 128 --heads-kv 8 --hidden 4096 --seqlen 2048 4096 --impl dash_det dash_det:descending
