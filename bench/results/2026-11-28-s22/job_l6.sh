#!/bin/bash
# Session 22, call 6 (the last 245 s of device time): the deterministic postprocess started
# early (programmatic dependent launch; its CTAs wait on their dQ tiles' semaphores and convert
# each tile on the SMs the main kernel's last tasks leave idle). Prediction: the postprocess
# (~0.05 ms a call, item 148's breakdown) leaves the call's critical path, less what the last
# tile's wait keeps: det +2-5% at 2k-4k, +0.5-1% at 16k, causal more than full (its tail is
# longer); non-det unchanged. One round, hdim 64 / 128 bf16 (the pdl library has only those
# units), then the deadlock and determinism tests on it (cases of other head dims fail for
# want of their units). Carry .ab/libs/{s22c,pdl}.so.gz.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT/ab $OUT/tests
export PYTHONUNBUFFERED=1
W='--warm-s 1 --min-s 0.5'
LIBS='.ab/libs/s22c.so.gz .ab/libs/pdl.so.gz' SASS=0 ROUNDS=1 \
BENCH="bench/bench_bwd.py --hdim 128 64 --seqlen 2048 4096 16384 --mask causal --impl dash_det $W ;; bench/bench_bwd.py --hdim 128 64 --seqlen 2048 16384 --mask full --impl dash_det $W" \
OUT=$OUT/ab bash bench/ab_job.sh
echo "A/B done at $(t)"
gunzip -c .ab/libs/pdl.so.gz > dash/_C.abi3.so
timeout 50 python3 -m pytest -q -x -p no:cacheprovider tests/test_deadlock.py -k "finishes_beside" > $OUT/tests/deadlock.txt 2>&1
echo "deadlock rc=$? at $(t): $(tail -1 $OUT/tests/deadlock.txt)"
timeout 40 python3 -m pytest -q -p no:cacheprovider tests/test_determinism.py > $OUT/tests/determinism.txt 2>&1
echo "determinism rc=$? at $(t): $(tail -1 $OUT/tests/determinism.txt)"
