#!/bin/bash
# For the next session: branch `x80` (hdim 256 on 64 x 80 tiles, RESULTS.md item 308) before its merge. Needs
# .ab/libs/x80full.so.gz (every unit of x80, e.g. CI's build of the branch) and .ab/libs/land41.so.gz (main's).
# 1. every hdim 256 GPU test (bf16 and fp16, plain and softcap) on x80full; 2. softcap 30 det / non-det, and
# fp16 plain, against land41, two rounds; 3. the GPU suite's other files on x80full, as time allows.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/x80full.so.gz > dash/_C.abi3.so
timeout 150 python3 -m pytest -q tests/test_head_dims.py tests/test_softcap.py tests/test_determinism.py tests/test_deadlock.py \
  tests/test_window.py tests/test_varlen.py tests/test_gqa.py tests/test_invariance.py -k "256 and not cpu" > $OUT/tests_256.txt 2>&1
echo "tests 256 rc=$? at $(t)"; tail -4 $OUT/tests_256.txt
LIBS='.ab/libs/land41.so.gz .ab/libs/x80full.so.gz' ROUNDS=2 SASS=0 \
  BENCH='bench/bench_bwd.py --hdim 256 --seqlen 4096 16384 --mask full causal --impl dash_det dash --softcap 30 --warm-s 1 --min-s 0.5;;bench/bench_bwd.py --hdim 256 --seqlen 2048 8192 --mask full causal --impl dash_det --warm-s 1 --min-s 0.5' \
  OUT=$OUT/ab timeout 360 bash bench/ab_job.sh > $OUT/ab_stdout.txt 2>&1
echo "ab rc=$? at $(t)"; grep -A20 "^| bench" $OUT/ab_stdout.txt
