#!/bin/bash
# For the next session (not run in session 46): the tail dealt longest first at hdim 64 / 96 / 192 /
# 192 x 128 too (tail_all_pairs.patch: their "bwd_tail" set to "longest_first", generated files
# included), against main, det causal: the usual grid and launches below the power cap (2-4 heads),
# plus GQA with few K/V heads (8 query heads over 2 K/V heads, hdim 128, Llama-3-8B at tensor-parallel
# 4; side a runs it with DASH_TEST_ITEM_ORDER_TAIL=1, so at 128 both sides run the same kernel, the tail
# off on a and on on b). Builds both trees on the GPU machine (CUTLASS in .site/cutlass), checks the variant's SASS, runs
# the tail's GPU tests on it, then two rounds. Write the prediction first.
set -u
SIDE_ENV_a='DASH_TEST_ITEM_ORDER_TAIL=1' PATCH=bench/results/2026-12-02-s46/tail_all_pairs.patch \
UNITS='bwd_hdim64_bf16_band,bwd_hdim96_bf16_band,bwd_hdim192_bf16_band,bwd_hdim192x128_bf16_band,bwd_hdim128_bf16_band,fwd_hdim64_bf16_band,fwd_hdim64_bf16_band_short,fwd_hdim96_bf16_band,fwd_hdim192_bf16_band,fwd_hdim192x128_bf16_band,fwd_hdim128_bf16_band' \
TESTS='tests/test_determinism.py -k "tail or diagonal or auto" tests/test_deadlock.py -k "diagonal or window"' \
ROUNDS=2 OUT=${OUT:-/tmp/ab_next} \
BENCH='bench/bench_bwd.py --hdim 64 96 192 192x128 --seqlen 8192 16384 --mask causal --impl dash_det --warm-s 1 --min-s 0.5 ;; bench/bench_bwd.py --hdim 64 96 192 --seqlen 16384 --hidden 384 --mask causal --impl dash_det --warm-s 1 --min-s 0.5 ;; bench/bench_bwd.py --hdim 128 --seqlen 16384 --hidden 1024 --heads-kv 2 --mask causal --impl dash_det --warm-s 1 --min-s 0.5' \
  bash bench/ab_job.sh
