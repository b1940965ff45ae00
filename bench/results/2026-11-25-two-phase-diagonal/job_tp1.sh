#!/bin/bash
# Two-phase diagonal, first GPU look: tests on the new library, then A/B of causal bwd TFLOPS.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
ROOT=$PWD
export PYTHONUNBUFFERED=1
mkdir -p /tmp/basetree && tar -xf .ab/basetree.tar -C /tmp/basetree
gunzip -c .ab/base.so.gz > /tmp/basetree/dash/_C.abi3.so
gunzip -c .ab/new.so.gz > $ROOT/dash/_C.abi3.so
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
START=$(date +%s)
(cd $ROOT && PYTHONPATH=$ROOT timeout 200 python3 -m pytest -q -x -p no:cacheprovider tests/test_invariance.py tests/test_determinism.py -k "not softcap" > $OUT/tests_new.txt 2>&1; echo "rc=$? $(( $(date +%s) - START ))s" >> $OUT/tests_new.txt)
tail -3 $OUT/tests_new.txt
bench() {  # side dir lag round
  local side=$1 dir=$2 lag=$3 r=$4
  (cd $dir && if [ "$lag" = "-" ]; then unset DASH_DIAGONAL_LAG; else export DASH_DIAGONAL_LAG=$lag; fi; \
   PYTHONPATH=$dir timeout 120 python3 bench/bench_bwd.py --hdim 64 128 --seqlen 2048 4096 16384 --mask causal \
     --impl dash_det --warm-s 1 --min-s 0.5 --out /tmp/bo_$side > $OUT/bench_${side}_$r.txt 2>&1)
}
for r in 1 2; do
  bench base /tmp/basetree - $r
  bench lag264 $ROOT 264 $r
  bench lag528 $ROOT 528 $r
  bench lag1056 $ROOT 1056 $r
  echo "round $r $(( $(date +%s) - START ))s"
done
cd $OUT && tar -czf logs.tgz *.txt
