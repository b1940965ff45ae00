#!/bin/bash
# Prepared for the next session (not run). Carry .ab/libs/main.so.gz (every unit of HEAD), .ab/libs/s128f.so.gz
# (hdim 128 bf16 forward units and the full-mask softcap backward unit built from HEAD with
# bwd_softcap128_full_two_bodies.patch, or from the trait-table form of it), .ab/fa3v and .ab/fa3sc
# (FlashAttention-3's hopper/ at 0251105a: varlen on / softcap on, hdim 64 / 128 bf16; GPU-WORKFLOW.md).
# (1) hdim 128's full-mask softcap backward compiled once per mask flag (RESULTS.md item 234: det
#     +1.3..+2.0%, non-det +0.5..+1.0%), its sanity cases first. Prediction: the same within 1%.
# (2) hdim 128's plain forward at 2k / 4k causal beside both FA3 builds, alternately, two rounds.
#     Prediction: fa3sc 1-3% faster than fa3v at causal 2k (items 223, 233: dash 0.966-0.968x fa3sc,
#     1.004x fa3v in session 26).
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/s128f.so.gz > dash/_C.abi3.so
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_softcap.py -k "d128 and bf16 and nc--1_-1" > $OUT/sanity_s128f.txt 2>&1
echo "s128f sanity rc=$?: $(tail -1 $OUT/sanity_s128f.txt) at $(t)"
B="bench/bench_bwd.py --hdim 128 --seqlen 2048 4096 16384 --mask full --impl dash_det dash --softcap 30 --warm-s 1 --min-s 0.5"
LIBS='.ab/libs/main.so.gz .ab/libs/s128f.so.gz' BENCH="$B" ROUNDS=2 SASS=0 OUT=$OUT/ab bash bench/ab_job.sh 2>&1 | tail -6
gunzip -c .ab/libs/main.so.gz > dash/_C.abi3.so
for round in 1 2; do
  for peer in fa3v fa3sc; do
    PYTHONPATH=$PWD/.ab/$peer timeout 40 python3 bench/bench_fwd.py --hdims 128 --seqlens 2048 4096 --masks causal \
      --impls dash fa3 --warm-s 1 --min-s 0.5 > $OUT/fwd_${peer}_$round.txt 2>&1; echo "fwd beside $peer round $round rc=$? at $(t)"
    grep -E "^\| 128" $OUT/fwd_${peer}_$round.txt
  done
done
echo "all done at $(t)"
