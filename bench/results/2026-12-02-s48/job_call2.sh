#!/bin/bash
# Call 2: diagonal's tail length on the GPU (library `cap`: HEAD + the DASH_TEST_TAIL_ITEMS override; units
# bwd / fwd hdim 128 and 64 bf16 band). The tail / diagonal determinism tests on it, then tail_cap_probe.py.
# Carry: .ab/libs/cap.so.gz
set -u
OUT=${OUT:-/tmp/out}
gunzip -c .ab/libs/cap.so.gz > dash/_C.abi3.so
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/test_determinism.py -k "tail or diagonal" > "$OUT/tests_cap.txt" 2>&1
echo "tests rc=$?: $(tail -1 "$OUT/tests_cap.txt")"
timeout 420 python3 bench/results/2026-12-02-s48/tail_cap_probe.py > "$OUT/probe.txt" 2>&1
echo "probe rc=$?"; sed -n '/mean of two rounds/,$p' "$OUT/probe.txt"
