#!/bin/bash
# Call 6: CI's full library of 34e9cfd (this session's kernel commit, every unit) through the backward's
# schedule-relevant GPU test files (the device budget left: about 300 s).
OUT=${OUT:-/tmp/out}
gunzip -c .ab/libs/full34e9cfd.so.gz > dash/_C.abi3.so
for t in test_determinism test_deadlock test_invariance test_gqa test_bwd_correctness test_window test_varlen; do
  timeout 60 python3 -m pytest -q -p no:cacheprovider "tests/$t.py" > "$OUT/$t.txt" 2>&1
  echo "$t rc=$?: $(tail -1 "$OUT/$t.txt")"
done
