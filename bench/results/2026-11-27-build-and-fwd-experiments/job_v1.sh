#!/bin/bash
# The whole library built on the GPU machine from HEAD (the build-time commits: no unit compiles
# CuTe's extended shapes, generated wide WGMMA instructions), every kernel's SASS compared with the
# carried final library of 23b8862 (.ab/libs/final3.so.gz), then the forward test files.
START=$(date +%s)
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 CC=/usr/bin/gcc CXX=/usr/bin/g++ PATH=$PATH:/usr/local/cuda/bin
export CUTLASS_PATH=$PWD/.site/cutlass/include
rm -rf build dash/_C.abi3.so
MAX_JOBS=16 python3 setup.py build_ext --inplace > $OUT/build.log 2>&1
echo "build rc=$? at $(( $(date +%s) - START ))s"
gzip -c dash/_C.abi3.so > $OUT/head.so.gz
gunzip -c .ab/libs/final3.so.gz > /tmp/final3.so
python3 bench/results/2026-11-27-build-and-fwd-experiments/cmp_sass.py /tmp/final3.so dash/_C.abi3.so > $OUT/cmp_sass.txt 2>&1
echo "kernels compared: $(grep -c . $OUT/cmp_sass.txt), identical: $(grep -c ' identical$' $OUT/cmp_sass.txt)"
FILES="test_fwd test_head_dims" DEADLINE=$(( 560 - ($(date +%s) - START) )) bash tools/gpu_test_job.sh
echo "done at $(( $(date +%s) - START ))s"
