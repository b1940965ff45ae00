#!/bin/bash
# Session 25, second call: A/B of the forward's passed steps (a warpgroup skips the GEMMs of the KV
# tiles its rows cannot see: mainloop.h, SeqTiles::n_block_end_of_rows), banded bf16 forward units.
# Sides: main (the landed library), pass (the change, hdim 64's short-walk unit included), passns
# (the change without the short-walk unit: hdim 64's 192 x 128 kernel at every length, to place the
# short-walk limit). Then the forward's causal tests on passns, and pass beside FA3 (hdim 64 causal).
# Prediction: hdim 64 causal on the 192 x 128 kernel +3-4% at 2k, +1.5-2% at 4k, ~+1% at 8k,
# ~+0.5% at 16k (one or two of three warpgroups pass one KV tile of every Q tile on the diagonal:
# 5.0 / 2.7 / 1.5 / 0.75% of the warpgroup steps at 2k-16k); passns at 2k then ~3% over pass (the
# short-walk kernel); hdim 128 / 96-style tiles (block_m = block_n, seqlen_q = seqlen_k) unchanged;
# 192 (128 x 112) and 256 (128 x 80) causal +0.3-1% (the lower warpgroup's edge tile).
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT/ab
export PYTHONUNBUFFERED=1
LIBS='.ab/libs/main.so.gz .ab/libs/pass.so.gz .ab/libs/passns.so.gz' SASS=0 ROUNDS=2 \
BENCH='bench/bench_fwd.py --hdims 64 --seqlens 1024 2048 4096 8192 16384 --masks causal --impls dash --warm-s 1 --min-s 0.5 --out /tmp/bf ;; bench/bench_fwd.py --hdims 128 192 256 --seqlens 2048 16384 --masks causal --impls dash --warm-s 1 --min-s 0.5 --out /tmp/bf' \
TESTS='tests/test_fwd.py -k "bf16 and causal"' TESTS_TIMEOUT=90 OUT=$OUT/ab bash bench/ab_job.sh
echo "ab done at $(t)"
mkdir -p /tmp/abx && tar xzf $OUT/ab/logs.tgz -C /tmp/abx && cat /tmp/abx/summary.txt; tail -3 /tmp/abx/tests_*.txt
gunzip -c .ab/libs/pass.so.gz > dash/_C.abi3.so
PYTHONPATH=$PWD/.ab/fa3v timeout 100 python3 bench/bench_fwd.py --hdims 64 --seqlens 1024 2048 4096 8192 16384 \
  --masks causal --impls dash fa3 --warm-s 1 --min-s 0.5 --out $OUT/f > $OUT/fwd_fa3.txt 2>&1
echo "fwd beside FA3 rc=$? at $(t)"; grep -E "^\|" $OUT/fwd_fa3.txt
