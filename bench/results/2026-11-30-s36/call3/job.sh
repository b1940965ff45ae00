#!/bin/bash
# Session 36, call 3: A/B of HEAD's kernels (fdfull) against exp/fwd-tma-store's per-warp TMA-store
# epilogue (tma2: STSM into the swizzled stage, lane 0 of each warp stores its 16 rows with TMA; hdim 128
# bf16 forward units only), with the forward tests those units serve (the others fail as "restricted").
# Prediction: +1.5-4% at hdim 128 causal 2k-4k, +0.5-2% full 1k-2k, ~0 from 8k; the packed mixes +1-2%.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
LIBS='.ab/libs/fdfull.so.gz .ab/libs/tma2.so.gz' ROUNDS=3 SASS=0 \
  TESTS='tests/test_fwd.py::test_matches_reference tests/test_fwd.py::test_bitwise_reproducible tests/test_fwd.py::test_strided_inputs tests/test_varlen.py::test_forward_matches_reference tests/test_varlen.py::test_forward_bits_do_not_depend_on_the_other_documents tests/test_varlen.py::test_seqused_leaves_unused_rows_zero tests/test_window.py::test_matches_reference tests/test_window.py::test_varlen_matches_reference' TESTS_TIMEOUT=200 \
  BENCH='bench/bench_fwd.py --hdims 128 --seqlens 1024 2048 4096 8192 --masks causal full --impls dash --warm-s 1 --min-s 0.5;;bench/bench_varlen.py --pass fwd --mix long short --impl dash --warm-s 1 --min-s 0.5' \
  OUT=$OUT/ab bash bench/ab_job.sh
grep -h -A3 "mix  docs" $OUT/ab/bench2_*.txt 2>/dev/null
for f in $OUT/ab/tests_*.txt; do echo "$f: $(grep -c '^E  ' $f) E-lines, $(grep '^E  ' $f | grep -vc restricted) not 'restricted'"; grep '^E  ' $f | grep -v restricted | head -5; tail -1 $f; done
