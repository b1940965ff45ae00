#!/bin/bash
# Session 39, call 2: why `kvmc` (call 1) ran 5-8% slower than main at every full-mask length, 1k included.
# kvmcd = kvmc + a diagnostic line (grid, cudaOccupancyMaxActiveClusters' pairs, the clustered grid) and
# DASH_DIAG_NO_CLUSTERS, which launches the same kernel unclustered (each CTA loads both halves with a
# one-CTA multicast). kvmcn = the same library with that switch set. Sides: land, kvmcd, kvmcn.
# Prediction: if kvmcn ~ land, the clusters cost (coupling / grid); if kvmcn ~ kvmcd, the kernel's code
# (40 / 232 registers, the release path) does.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/kvmcd.so.gz > dash/_C.abi3.so
python3 bench/bench_fwd.py --hdims 128 --seqlens 2048 16384 --masks full --impls dash --warm-s 0.3 --min-s 0.2 2>&1 | grep -E "diag|^\| 128" | head -5
SIDE_ENV_kvmcn='DASH_DIAG_NO_CLUSTERS=1' LIBS='.ab/libs/land.so.gz .ab/libs/kvmcd.so.gz .ab/libs/kvmcn.so.gz' ROUNDS=2 SASS=0 \
  BENCH='bench/bench_fwd.py --hdims 128 --seqlens 1024 4096 16384 --masks full --impls dash --warm-s 1 --min-s 0.5;;bench/bench_fwd.py --hdims 128 --hidden 4096 --heads-kv 8 --seqlens 16384 --masks full --impls dash --warm-s 1 --min-s 0.5' \
  OUT=$OUT/ab timeout 300 bash bench/ab_job.sh > $OUT/ab_stdout.txt 2>&1
echo "ab rc=$? at $(t)"; tail -8 $OUT/ab_stdout.txt
