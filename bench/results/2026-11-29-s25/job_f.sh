#!/bin/bash
# Session 25, fifth call: the forward's mask with one compare an entry where only the band's right
# edge can hide one (a causal diagonal inside the keys; fwd_mask_right_edge.patch: ElementMask::
# right_edge_only). Nsight (job_c.sh) counted 2 ISETP an entry on dash's masked steps (the band's
# left and right edges, its bounds run-time values) against FA3's 1 (its causal kernel is its own):
# 3.1M of 149M warp instructions at hdim 64 causal 2k. Sides: passns (9c934d9's band units, no
# short-walk unit) and mask1 (that plus the patch; hdim 64 / 128 bf16 band units), two rounds, then
# test_fwd's bf16 causal tests on mask1.
# Prediction: hdim 64 causal (the 192 x 128 kernel) +0.5-1.5% at 1k-4k, less at 8k; hdim 128 (steps
# compiled per flag, masked steps only at the diagonal) within noise.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT/ab
export PYTHONUNBUFFERED=1
LIBS='.ab/libs/passns.so.gz .ab/libs/mask1.so.gz' SASS=0 ROUNDS=2 \
BENCH='bench/bench_fwd.py --hdims 64 --seqlens 1024 2048 4096 8192 --masks causal --impls dash --warm-s 1 --min-s 0.5 --out /tmp/bf ;; bench/bench_fwd.py --hdims 128 --seqlens 2048 --masks causal --impls dash --warm-s 1 --min-s 0.5 --out /tmp/bf' \
TESTS='tests/test_fwd.py -k "bf16 and causal and not 192 and not 256 and not 96"' TESTS_TIMEOUT=60 OUT=$OUT/ab bash bench/ab_job.sh
echo "ab done at $(t)"
