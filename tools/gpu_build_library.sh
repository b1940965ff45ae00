#!/bin/bash
# Builds the whole op library (or DASH_INSTANTIATIONS' units) on the GPU machine, from the working
# tree, with CUTLASS from the carried .site/cutlass (or CUTLASS_PATH), and leaves a gzip'd copy
# as $OUT/head.so.gz to carry back (e.g. into .ab/libs/ for later calls that only run it):
#   OUT=/tmp/out bash tools/gpu_build_library.sh && bash tools/gpu_test_job.sh
START=$(date +%s); OUT=${OUT:-/tmp/gpu_build}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 CC=${CC:-/usr/bin/gcc} CXX=${CXX:-/usr/bin/g++} PATH=$PATH:/usr/local/cuda/bin
export CUTLASS_PATH=${CUTLASS_PATH:-$PWD/.site/cutlass/include}
rm -rf build dash/_C.abi3.so
MAX_JOBS=${MAX_JOBS:-16} python3 setup.py build_ext --inplace > "$OUT/build.log" 2>&1
rc=$?
echo "build rc=$rc in $(( $(date +%s) - START ))s"
[ $rc -eq 0 ] && gzip -c dash/_C.abi3.so > "$OUT/head.so.gz"
exit $rc
