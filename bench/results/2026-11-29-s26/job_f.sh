#!/bin/bash
# Session 26, sixth call: item 203, the forward softmax in FA3's phase order (every row's max, the
# quads' reductions, every exponential, then the sums; fwd_softmax_phases.patch): `ph` (hdim 128 bf16
# full / band and hdim 64 bf16 band units) against `s26`. Bits first (fwd_bits.py: the same additions
# in the same order, so the same bits), then the A/B.
# Prediction: bits equal; hdim 128 causal +0.5-1.5% (fewer fixed-latency waits at the MUFU ops),
# hdim 64 within +-1%.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
D=bench/results/2026-11-29-s26
gunzip -c .ab/libs/s26.so.gz > dash/_C.abi3.so
python3 $D/fwd_bits.py save /tmp/bits.pt > $OUT/bits.txt 2>&1
gunzip -c .ab/libs/ph.so.gz > dash/_C.abi3.so
python3 $D/fwd_bits.py compare /tmp/bits.pt >> $OUT/bits.txt 2>&1; cat $OUT/bits.txt
echo "bits at $(t)"
LIBS='.ab/libs/s26.so.gz .ab/libs/ph.so.gz' SASS=0 ROUNDS=2 \
BENCH='bench/bench_fwd.py --hdims 128 --seqlens 4096 8192 --masks causal full --impls dash --warm-s 1 --min-s 0.5 --out /tmp/bf;;bench/bench_fwd.py --hdims 64 --seqlens 4096 8192 --masks causal --impls dash --warm-s 1 --min-s 0.5 --out /tmp/bf' \
  OUT=$OUT/ab bash bench/ab_job.sh
echo "A/B done at $(t)"
