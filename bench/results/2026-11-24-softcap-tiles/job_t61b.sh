#!/bin/bash
# rebuild (the machine may be fresh) and run the refactored trace test file
export CC=/usr/bin/gcc CXX=/usr/bin/g++ CUTLASS_PATH=$PWD/.site/cutlass/include
mkdir -p $OUT; T0=$(date +%s)
MAX_JOBS=16 timeout 330 python3 setup.py build_ext --inplace > $OUT/build.log 2>&1; echo "build rc $? $(( $(date +%s) - T0 ))s" >> $OUT/tests.txt
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/test_determinism.py tests/test_traits.py tests/test_softcap.py -rs > $OUT/det.log 2>&1; echo "det rc $?" >> $OUT/tests.txt; tail -3 $OUT/det.log >> $OUT/tests.txt
