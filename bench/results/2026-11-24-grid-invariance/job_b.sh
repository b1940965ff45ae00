#!/bin/bash
export CC=/usr/bin/gcc CXX=/usr/bin/g++ CUTLASS_PATH=$PWD/.site/cutlass/include
export PATH=$PATH:/usr/local/cuda/bin
date
if [ ! -f dash/_C.abi3.so ] || [ "$REBUILD" = 1 ]; then
MAX_JOBS=16 python3 setup.py build_ext --inplace > $OUT/build.log 2>&1; echo "build rc=$?"; tail -3 $OUT/build.log
python3 tools/check_sass.py dash/_C.abi3.so > $OUT/sass.txt 2>&1; echo "sass rc=$?"; tail -3 $OUT/sass.txt
fi
date
for t in "$@"; do
  n=$(basename $t .py)
  timeout 400 python3 -m pytest -q -x -p no:cacheprovider tests/$t.py > $OUT/$n.txt 2>&1; echo "$n rc=$?"; tail -4 $OUT/$n.txt
  date
done
