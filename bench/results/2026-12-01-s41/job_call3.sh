#!/bin/bash
# Session 41, call 3: session 39's prepared forward pair (item 289), rebased in session 40, run on session 41's main (28ceaec). Libraries to build first on
# the CPU machine (a partial build takes 1-2 minutes; the session's checkout has none):
#   main:  DASH_INSTANTIATIONS=$UNITS python3 setup.py build_ext --inplace; gzip -c dash/_C.abi3.so > .ab/libs/main.so.gz
#   wg:    a worktree of main + fwd_kv_release_per_warpgroup.patch (git apply), same units -> .ab/libs/wg.so.gz
#   lim:   a worktree of main + fwd_kv_multicast_limits_at_1.patch (git apply; then
#          python3 csrc/instantiations/generate.py), same units -> .ab/libs/lim.so.gz
#   UNITS='fwd_hdim128_bf16_full,fwd_hdim96_bf16_full,fwd_hdim192_bf16_full,fwd_hdim192x128_bf16_full,fwd_hdim256_bf16_full'
# Carry .ab/libs/main.so.gz .ab/libs/wg.so.gz .ab/libs/lim.so.gz.
# (1) wg: the multicast kernels release a K / V stage with one thread a warpgroup (2 remote arrives a stage
#     instead of 8; CUTLASS's PipelineTmaAsync signals so). Prediction: +0..+0.5% at hdim 128 16k and 256,
#     nothing below the limits (the plain kernels are untouched).
# (2) lim: multicast from every length at 96, 192, 192 / 128 and 256, to place the limits below the lengths
#     session 39 measured (2k at 192-256, 4k at 96). Prediction: 192-256 about even at 1k, -1..-3% at 512;
#     96 even at 2k.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
LIBS='.ab/libs/fp_main.so.gz .ab/libs/fp_wg.so.gz .ab/libs/fp_lim.so.gz' ROUNDS=2 SASS=0 \
  BENCH='bench/bench_fwd.py --hdims 128 --seqlens 8192 16384 --masks full --impls dash --warm-s 1 --min-s 0.5;;bench/bench_fwd.py --hdims 128 --hidden 4096 --heads-kv 8 --seqlens 16384 --masks full --impls dash --warm-s 1 --min-s 0.5;;bench/bench_fwd.py --hdims 256 192 192x128 --seqlens 512 1024 4096 --masks full --impls dash --warm-s 1 --min-s 0.5;;bench/bench_fwd.py --hdims 96 --seqlens 1024 2048 --masks full --impls dash --warm-s 1 --min-s 0.5' \
  OUT=$OUT/ab timeout 540 bash bench/ab_job.sh > $OUT/ab_stdout.txt 2>&1
echo "ab rc=$? at $(t)"; tail -20 $OUT/ab_stdout.txt
