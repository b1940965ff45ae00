#!/bin/bash
# The landed code (zst2: the store-or-add choice as one predicated asm pair, every unit, built
# here) through the GPU test files that run the backward's dQ writer, in the device time left.
# Carry .ab/libs/zst2.so.gz.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT/tests
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/zst2.so.gz > dash/_C.abi3.so
FILES="test_determinism test_bwd_correctness test_varlen test_window test_gqa test_head_dims test_softcap
  test_invariance test_deadlock" SASS=0 STRESS_MAX_S=10 DEADLINE=${TEST_DEADLINE:-195} \
  OUT=$OUT/tests bash tools/gpu_test_job.sh
echo "tests done at $(t)"
# Then the predicated store's speed against zst_full's branch (det, one round, one process per library).
for lib in zst_full zst2; do
  gunzip -c .ab/libs/$lib.so.gz > dash/_C.abi3.so
  timeout 45 python3 bench/bench_bwd.py --hdim 128 64 --seqlen 2048 16384 --mask causal --impl dash_det \
    --warm-s 1 --min-s 0.5 > $OUT/bench_$lib.txt 2>&1
  echo "$lib rc=$? at $(t)"; grep -E "^ *[0-9x]+ +[0-9]+ " $OUT/bench_$lib.txt
done
