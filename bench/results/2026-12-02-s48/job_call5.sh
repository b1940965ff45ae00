#!/bin/bash
# Call 5: the capped deterministic tail at hdim 96 / 192 / 192 x 128 (library `tail3`: f0fc374 with the trait
# table's "bwd_tail": "longest_first" on those pairs; units bwd / fwd 96, 192, 192x128 bf16 band), against main's
# kernels (CI's full library of 34e9cfd; f0fc374 changed none of those pairs' kernels). The tail's determinism
# tests on tail3, then the A/B, det causal, two rounds. Carry: .ab/libs/tail3.so.gz .ab/libs/full34e9cfd.so.gz .ab/tail3/dash/_traits.py
set -u
OUT=${OUT:-/tmp/out}
gunzip -c .ab/libs/tail3.so.gz > dash/_C.abi3.so
cp .ab/tail3/dash/_traits.py dash/_traits.py  # the pairs with the tail, for the tests
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_determinism.py -k "tail and (96- or 192-)" > "$OUT/tests_tail3.txt" 2>&1
echo "tests rc=$?: $(tail -1 "$OUT/tests_tail3.txt")"
S='--mask causal --impl dash_det --warm-s 1 --min-s 0.5'
LIBS='.ab/libs/full34e9cfd.so.gz .ab/libs/tail3.so.gz' SASS=0 ROUNDS=2 OUT=$OUT/ab \
BENCH="bench/bench_bwd.py --hdim 96 --seqlen 16384 $S ;; bench/bench_bwd.py --hdim 96 --seqlen 16384 --hidden 384 $S ;; bench/bench_bwd.py --hdim 192 --seqlen 8192 16384 $S ;; bench/bench_bwd.py --hdim 192 --seqlen 16384 --hidden 384 $S ;; bench/bench_bwd.py --hdim 192x128 --seqlen 16384 $S" \
  bash bench/ab_job.sh
cat "$OUT/ab/summary.txt" 2>/dev/null
