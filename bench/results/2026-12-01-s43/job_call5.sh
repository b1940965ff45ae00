#!/bin/bash
# Session 43, call 5: the adds from registers at hdim 192 (`d192r`: trait "bwd_dq_add": "registers" at (192, 192); no
# staging buffer, so two Q, two dS and two dO stages; three MMA warpgroups) against land41, both modes, two rounds;
# first the backward / determinism / deadlock tests of the register path on both partial libraries (d192r at 192,
# dqr at 256; bf16 plain units only).
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
for pair in "d192r 192" "dqr 256"; do set -- $pair
  gunzip -c .ab/libs/$1.so.gz > dash/_C.abi3.so
  K="$2 and not 192x128 and not fp16 and not float16 and not softcap and not forward and not cpu"
  timeout 170 python3 -m pytest -q tests/test_head_dims.py tests/test_determinism.py tests/test_deadlock.py -k "$K" > $OUT/tests_$1.txt 2>&1
  echo "tests $1 rc=$? at $(t)"; tail -4 $OUT/tests_$1.txt
done
LIBS='.ab/libs/land41.so.gz .ab/libs/d192r.so.gz' ROUNDS=2 SASS=0 \
  BENCH='bench/bench_bwd.py --hdim 192 --seqlen 4096 16384 --mask full causal --impl dash_det dash --warm-s 1 --min-s 0.5' \
  OUT=$OUT/ab timeout 300 bash bench/ab_job.sh > $OUT/ab_stdout.txt 2>&1
echo "ab rc=$? at $(t)"; grep -A12 "^| bench" $OUT/ab_stdout.txt
