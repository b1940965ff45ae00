#!/bin/bash
# (Ran as one of three copies of the analysis script, merged since into fwd_tile_phases.py: same output.)
# Session 36, call 2. (a) The staged epilogue's phases (ftrace2: exp/fwd-tile-phases with the epilogue
# stamped). (b) A/B of HEAD's kernels (fdfull) against exp/fwd-tma-store (tma1: O staged with STSM, each
# warp's rows written by the bulk-copy engine; hdim 128 bf16 forward units only), with the forward tests
# those units serve.
# Prediction (b): +1.5-4% at hdim 128 causal 2k-4k, +0.5-2% full 1k-2k, ~0 from 8k.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
gunzip -c .ab/libs/ftrace2.so.gz > dash/_C.abi3.so
PYTHONPATH=$PWD timeout 200 python3 bench/results/2026-11-30-s36/fwd_tile_phases.py --epilogue staged 2048 4096 16384 > $OUT/phases.txt 2>&1
echo "phases rc=$?"; tail -30 $OUT/phases.txt
LIBS='.ab/libs/fdfull.so.gz .ab/libs/tma1.so.gz' ROUNDS=3 SASS=0 \
  TESTS='tests/test_fwd.py::test_matches_reference tests/test_fwd.py::test_bitwise_reproducible tests/test_fwd.py::test_strided_inputs tests/test_varlen.py::test_forward_matches_reference tests/test_varlen.py::test_forward_bits_do_not_depend_on_the_other_documents tests/test_varlen.py::test_seqused_leaves_unused_rows_zero tests/test_window.py::test_matches_reference -k "128 or not (64 or 96 or 192 or 256)"' TESTS_TIMEOUT=200 \
  BENCH='bench/bench_fwd.py --hdims 128 --seqlens 1024 2048 4096 8192 --masks causal full --impls dash --warm-s 1 --min-s 0.5;;bench/bench_varlen.py --pass fwd --mix long short --impl dash --warm-s 1 --min-s 0.5' \
  OUT=$OUT/ab bash bench/ab_job.sh
grep -h -A3 "mix  docs" $OUT/ab/bench2_*.txt 2>/dev/null
