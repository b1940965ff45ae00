#!/bin/bash
# Prepared for the next session (RESULTS item 161; not run yet): the branch det-full-split (88a2ae9:
# deterministic 192 / 192x128 full masks split to walks of 64 steps, split calls dealt in chunks of
# at least 2 x parts walks within 32 MB) against f155 (11f2f9e), deterministic full masks, GQA 192 /
# 192x128 16 / 4 and Llama 32 / 8 (the controls: Llama splits only at 16k, where its chunk goes 1 -> 2),
# 2k / 4k / 16k, two rounds alternating. Prediction (item 161): +5-8% at 192 / 192x128 2k-4k (the
# model's +9-16% discounted for its chunk over-prediction), +0-2% at 16k (4 parts instead of 2),
# Llama 2k-4k unchanged, Llama 16k within +-1%.
# Libraries: .ab/libs/f155.so.gz (whole) and .ab/libs/detsplit.so.gz (built locally from the branch
# with DASH_INSTANTIATIONS='*hdim192_bf16_full,*hdim192x128_bf16_full,*hdim128_bf16_full,*hdim256_bf16_full').
# Carry both and .site. About 4 minutes.
OUT=${OUT:-/tmp/out}
LIBS='.ab/libs/f155.so.gz .ab/libs/detsplit.so.gz' SASS=0 ROUNDS=2 \
BENCH='bench/bench_bwd.py --hdim 192 192x128 --hidden 3072 --heads-kv 4 --seqlen 2048 4096 16384 --mask full --impl dash_det --warm-s 1 --min-s 0.5 ;; bench/bench_bwd.py --hdim 128 --hidden 4096 --heads-kv 8 --seqlen 2048 4096 16384 --mask full --impl dash_det --warm-s 1 --min-s 0.5' \
OUT=$OUT bash bench/ab_job.sh
