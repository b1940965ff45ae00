#!/bin/bash
# Call 3: the deterministic tail capped by the planner (schedule.h diagonal_tail_cap: max(grid / 2, 5/8 of a
# head's items)), library `final` (hdim 128 / 64 bf16 band units, built here), against CI's full library of
# 34e9cfd (main's kernels). Tests on `final`, then the A/B, two rounds. Carry: .ab/libs/final.so.gz
# .ab/libs/full34e9cfd.so.gz
set -u
OUT=${OUT:-/tmp/out}
gunzip -c .ab/libs/final.so.gz > dash/_C.abi3.so
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/test_determinism.py tests/test_deadlock.py \
  -k "tail or diagonal" > "$OUT/tests_final.txt" 2>&1
echo "tests rc=$?: $(tail -1 "$OUT/tests_final.txt")"
S='--impl dash_det --warm-s 1 --min-s 0.5'
LIBS='.ab/libs/full34e9cfd.so.gz .ab/libs/final.so.gz' SASS=0 ROUNDS=2 OUT=$OUT/ab \
BENCH="bench/bench_bwd.py --hdim 128 --seqlen 8192 16384 --mask causal $S ;; bench/bench_bwd.py --hdim 128 --seqlen 16384 --hidden 1024 --mask causal $S ;; bench/bench_bwd.py --hdim 128 --seqlen 16384 --hidden 1024 --heads-kv 2 --mask causal $S ;; bench/bench_bwd.py --hdim 128 --seqlen 16384 32768 --total-tokens 32768 --mask causal --window 4096 $S" \
  bash bench/ab_job.sh
cat "$OUT/ab/summary.txt" 2>/dev/null || (cd "$OUT/ab" && tar xzf logs.tgz summary.txt && cat summary.txt)
