#!/bin/bash
# Session 36, call 5: A/B/C of HEAD's kernels (fdfull), tma3 (TMA-store epilogue + the producer loads a
# tile's first K before its Q) and q2 (tma3 + two Q buffers, Q loaded before the first K, the Q of the
# next tile while this one's last steps run); hdim 128 bf16 forward units; tests on q2.
# Prediction: tma3 within +-0.5% of fdfull; q2 +1.5-3% at causal 1k-4k, +0.5-1.5% full 1k-2k, ~+0.5% from 8k.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
LIBS='.ab/libs/fdfull.so.gz .ab/libs/tma3.so.gz .ab/libs/q2.so.gz' ROUNDS=3 SASS=0 \
  TESTS='tests/test_fwd.py::test_matches_reference tests/test_fwd.py::test_bitwise_reproducible tests/test_fwd.py::test_strided_inputs tests/test_varlen.py::test_forward_matches_reference tests/test_varlen.py::test_forward_bits_do_not_depend_on_the_other_documents tests/test_varlen.py::test_seqused_leaves_unused_rows_zero tests/test_window.py::test_matches_reference tests/test_window.py::test_varlen_matches_reference' TESTS_TIMEOUT=200 \
  BENCH='bench/bench_fwd.py --hdims 128 --seqlens 1024 2048 4096 8192 --masks causal full --impls dash --warm-s 1 --min-s 0.5;;bench/bench_varlen.py --pass fwd --mix long short --impl dash --warm-s 1 --min-s 0.5' \
  OUT=$OUT/ab bash bench/ab_job.sh
cd $OUT/ab && tar xzf logs.tgz 2>/dev/null; grep -H -A3 "mix  docs" bench2_*.txt | grep -v wrote
for f in tests_*.txt; do echo "$f: $(grep -c '^E  ' $f) E-lines, $(grep '^E  ' $f | grep -vc restricted) not 'restricted'"; grep '^E  ' $f | grep -v restricted | head -5; tail -1 $f; done
