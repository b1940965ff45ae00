#!/bin/bash
# Session 24, fifth call (prepared as the fourth; its tests ran as job_n4a.sh): A/B of the short-walk forward (s24)
# through the forward's GPU tests, then A/B against main: hdim 64's forward grid and the packed
# mixes' forward, with s24seq (s24 plus the forward's packed banded calls numbered sequence-major,
# fwd_varlen_seq_major.patch) as a third side.
# Predictions: s24 = f64v2 of job_n3 at hdim 64 causal 512-2k (+13-15% / +1.5%) and main's numbers
# from 4k and on full masks; hdim 64 short packed mix +7%; hdim 128 unchanged. s24seq: the long
# mix's forward (hdim 128, MHA 0.945x FA3) +3-6% (a global longest-first order instead of head by
# head, each head ending on its longest document's tiles), short mix within noise.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT/tests $OUT/ab
export PYTHONUNBUFFERED=1
LIBS='.ab/libs/main.so.gz .ab/libs/s24.so.gz .ab/libs/s24seq.so.gz' SASS=0 ROUNDS=2 \
BENCH='bench/bench_fwd.py --hdims 64 --seqlens 512 1024 2048 4096 16384 --masks causal --impls dash --warm-s 1 --min-s 0.5 --out /tmp/bf ;; bench/bench_varlen.py --pass fwd --impl dash --warm-s 1 --min-s 0.5 --out /tmp/bv ;; bench/bench_varlen.py --pass fwd --hdim 64 --heads 32 --impl dash --warm-s 1 --min-s 0.5 --out /tmp/bv' \
  OUT=$OUT/ab bash bench/ab_job.sh
echo "ab done at $(t)"
for f in $OUT/ab/logs.tgz; do mkdir -p /tmp/abx && tar xzf $f -C /tmp/abx; grep -H -E "long|short" /tmp/abx/bench[23]_*.txt; done
