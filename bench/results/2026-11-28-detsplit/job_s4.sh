#!/bin/bash
# Session 20's last call: main's HEAD (4804022: the deterministic 192 split, bwd_mask "after_ds" at
# hdim 64) as `.ci/run` built it (.ab/libs/4804022.so.gz), through the GPU test files that cover
# both changes (plans, hdim 64's kernels with every mask, windows, varlen, determinism, the
# invariance contract, deadlock; test_head_dims and test_softcap if time is left), then a one-round
# look at hdim 64 4k / 16k, both masks, det and non-det. Carry .ab/libs/4804022.so.gz. About 4
# minutes (the session's last 366 s of device time).
START=$(date +%s)
OUT=${OUT:-/tmp/out}; mkdir -p $OUT/tests
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/4804022.so.gz > dash/_C.abi3.so
FILES="test_gqa test_bwd_correctness test_determinism test_window test_invariance test_varlen test_deadlock test_head_dims test_softcap" \
SASS=0 STRESS_MAX_S=10 DEADLINE=190 OUT=$OUT/tests bash tools/gpu_test_job.sh
echo "tests done at $(( $(date +%s) - START ))s"
timeout 45 python3 bench/bench_bwd.py --hdim 64 --seqlen 4096 16384 --mask full causal --impl dash_det dash --warm-s 1 --min-s 0.5 --out /tmp/b1 > $OUT/bench64.txt 2>&1
grep -E "^ *[0-9x]+ +[0-9]+ " $OUT/bench64.txt
echo "all done at $(( $(date +%s) - START ))s"
