#!/bin/bash
# Call 4: tail2 (the working tree to be committed; hdim 128 bf16 band / full and hdim 64 bf16 band units)
# through the schedule-relevant GPU test files. A failure whose error is "no ... kernel ... restricted
# DASH_INSTANTIATIONS" is a unit not built; every other failure is counted apart.
OUT=${OUT:-/tmp/out}
gunzip -c .ab/libs/tail2.so.gz > dash/_C.abi3.so
for t in test_determinism test_deadlock test_invariance test_bwd_correctness test_gqa; do
  timeout 100 python3 -m pytest -q -p no:cacheprovider -rf "tests/$t.py" > "$OUT/$t.txt" 2>&1
  fails=$(grep -c "^FAILED" "$OUT/$t.txt")
  other=$(grep "^FAILED" "$OUT/$t.txt" | grep -vc "restricted DASH_INSTANTIATIONS\|no backward kernel\|no forward kernel")
  echo "$t rc=$?: $(tail -1 "$OUT/$t.txt") | failed $fails, of them not a missing unit: $other"
done
