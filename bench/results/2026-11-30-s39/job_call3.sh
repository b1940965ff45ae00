#!/bin/bash
# Session 39, call 3: call 2 found kvmc's kernel code itself 5-7% slower (clustered or not). kvbf: the
# release without a run-time branch in the steps (lane 0 of each warp arrives on self and on the peer,
# the peer being itself when unclustered); kvbfn: the same library unclustered (DASH_DIAG_NO_CLUSTERS);
# kvbf24: kvbf with the producer at 24 registers (MMA 240; its producer spills, diagnosis only).
# Prediction: if the branch split the steps, kvbf ~ land + 1..3% and kvbfn ~ land - 0..1%.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/kvbf.so.gz > dash/_C.abi3.so
timeout 100 python3 -m pytest -q -p no:cacheprovider tests/test_fwd.py tests/test_invariance.py -k "128 and not float16 and not fp16" > $OUT/tests_kvbf.txt 2>&1
echo "tests rc=$? at $(t): $(tail -1 $OUT/tests_kvbf.txt)"; grep -E "^FAILED" $OUT/tests_kvbf.txt | head -5
SIDE_ENV_kvbfn='DASH_DIAG_NO_CLUSTERS=1' LIBS='.ab/libs/land.so.gz .ab/libs/kvbf.so.gz .ab/libs/kvbfn.so.gz .ab/libs/kvbf24.so.gz' ROUNDS=2 SASS=0 \
  BENCH='bench/bench_fwd.py --hdims 128 --seqlens 1024 4096 16384 --masks full --impls dash --warm-s 1 --min-s 0.5;;bench/bench_fwd.py --hdims 128 --hidden 4096 --heads-kv 8 --seqlens 16384 --masks full --impls dash --warm-s 1 --min-s 0.5' \
  OUT=$OUT/ab timeout 330 bash bench/ab_job.sh > $OUT/ab_stdout.txt 2>&1
echo "ab rc=$? at $(t)"; tail -7 $OUT/ab_stdout.txt
