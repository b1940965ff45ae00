#!/bin/bash
# Session 46, call 6: `poll` (the tail's wait reads the semaphores of each writer's last step; the
# dQ writer's per-step progress store of 0a19dfb removed) on its bf16 band units of 64 / 128 / 192
# / 256 and 128 full: the GPU tests that run the dealing (units built: the others fail with "no
# kernel"), then against main before this session (base: ae782f9, 128 / 256 band units), det causal,
# steady state: the usual grid at 128 / 256 8k / 16k, and hdim 128 16k with 4 heads.
set -u
START=$(date +%s)
export PYTHONUNBUFFERED=1
mkdir -p "$OUT/t"
gunzip -c .ab/libs/poll.so.gz > dash/_C.abi3.so
timeout 100 python3 -m pytest -q -p no:cacheprovider tests/test_determinism.py -k "tail or diagonal or auto or bitwise" > "$OUT/t/determinism.txt" 2>&1
echo "determinism rc=$? at $(( $(date +%s) - START ))s: $(tail -1 "$OUT/t/determinism.txt")"
timeout 100 python3 -m pytest -q -p no:cacheprovider tests/test_deadlock.py -k "diagonal or long_kernel or window" > "$OUT/t/deadlock.txt" 2>&1
echo "deadlock rc=$? at $(( $(date +%s) - START ))s: $(tail -1 "$OUT/t/deadlock.txt")"
timeout 60 python3 -m pytest -q -p no:cacheprovider tests/test_invariance.py -k "causal or 700 or 300" > "$OUT/t/invariance.txt" 2>&1
echo "invariance rc=$? at $(( $(date +%s) - START ))s: $(tail -1 "$OUT/t/invariance.txt")"
(cd "$OUT/t" && tar czf ../tests.tgz ./*.txt && rm -rf "$OUT/t")
LIBS='.ab/libs/base.so.gz .ab/libs/poll.so.gz' SASS=0 ROUNDS=2 OUT="$OUT/ab" \
  BENCH='bench/bench_bwd.py --hdim 128 256 --seqlen 8192 16384 --mask causal --impl dash_det --warm-s 1 --min-s 0.5 ;; bench/bench_bwd.py --hdim 128 --seqlen 16384 --hidden 512 --mask causal --impl dash_det --warm-s 1 --min-s 0.5' \
  bash bench/ab_job.sh
echo "done at $(( $(date +%s) - START ))s"
