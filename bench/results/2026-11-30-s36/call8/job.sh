#!/bin/bash
# Session 36, call 8: A/B of HEAD's kernels (fdfull) against exp/fwd-tile-setup-by-producer (setup1: the
# producer works out a tile's unmasked KV range and each warpgroup's passed steps with the tile record,
# so the MMA warpgroups' first GEMM waits on no mask arithmetic; hdim 128 bf16 forward units only),
# three rounds, with the forward tests those units serve.
# Prediction (call 7: a banded tile's setup ~350 cycles longer than a full one's, before its first
# GEMM): hdim 128 causal +1-1.5% at 2k, +0.5-1% at 4k, ~+0.3% from 8k; full masks within +-0.3%; the
# packed mixes (causal) +0.3-1%; Llama-3-8B GQA causal 2k / 4k +0.5-1.5%.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
LIBS='.ab/libs/fdfull.so.gz .ab/libs/setup1.so.gz' ROUNDS=3 SASS=0 \
  TESTS='tests/test_fwd.py::test_matches_reference tests/test_fwd.py::test_bitwise_reproducible tests/test_fwd.py::test_strided_inputs tests/test_varlen.py::test_forward_matches_reference tests/test_varlen.py::test_forward_bits_do_not_depend_on_the_other_documents tests/test_varlen.py::test_seqused_leaves_unused_rows_zero tests/test_window.py::test_matches_reference tests/test_window.py::test_varlen_matches_reference tests/test_window.py::test_rows_without_keys_and_keys_without_rows' TESTS_TIMEOUT=200 \
  BENCH='bench/bench_fwd.py --hdims 128 --seqlens 1024 2048 4096 8192 --masks causal full --impls dash --warm-s 1 --min-s 0.5;;bench/bench_varlen.py --pass fwd --mix long short --impl dash --warm-s 1 --min-s 0.5;;bench/bench_fwd.py --hdims 128 --hidden 4096 --heads-kv 8 --seqlens 2048 4096 --masks causal --impls dash --warm-s 1 --min-s 0.5' \
  OUT=$OUT/ab bash bench/ab_job.sh
cd $OUT/ab && tar xzf logs.tgz 2>/dev/null; grep -H -A3 "mix  docs" bench2_*.txt | grep -v wrote
for f in tests_*.txt; do echo "$f: $(grep -c '^E  ' $f) E-lines, $(grep '^E  ' $f | grep -vc restricted) not 'restricted'"; grep '^E  ' $f | grep -v restricted | head -5; tail -1 $f; done
