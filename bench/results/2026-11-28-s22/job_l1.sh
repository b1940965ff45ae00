#!/bin/bash
# Session 22, call 1: non-deterministic causal `auto` deals ascending (the longest tasks first)
# from a counter in FlashAttention-3's L2 sections of walks, instead of symmetric shift (static
# rounds; hdim 64 / 128) or diagonal (shortest first within a head; 192, 192 x 128).
# Prediction (the dealing model: idle tail 7.5% -> 0.1-0.9% at hdim 128 16k; item 159's
# observation that no non-det order reached FA3's pace; item 143's static descending at 16k):
# non-det causal +1-4% at 4k-16k, most at hdim 128 and at 192 / 192 x 128 16k; 2k about even.
# Det `auto` (diagonal) is untouched: its numbers should not move.
# (1) A/B old (twob2 = main's 00bcf24 library) / new (this tree, every unit), two rounds.
# (2) The section width swept with DASH_DEAL_CHUNK on the new library.
# (3) The new library beside FA3 non-det (hdim 64 / 128) and cuDNN (192 x 128).
# Carry .ab/libs/{twob2,s22}.so.gz and .ab/fa3.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT/ab $OUT/sweep
export PYTHONUNBUFFERED=1
W='--warm-s 1 --min-s 0.5'
LIBS='.ab/libs/twob2.so.gz .ab/libs/s22.so.gz' SASS=0 ROUNDS=2 \
BENCH="bench/bench_bwd.py --hdim 64 128 --seqlen 2048 4096 8192 16384 --mask causal --impl dash $W ;; bench/bench_bwd.py --hdim 192 192x128 --seqlen 4096 16384 --mask causal --impl dash $W ;; bench/bench_bwd.py --hdim 128 --seqlen 4096 16384 --mask causal --impl dash_det $W" \
OUT=$OUT/ab bash bench/ab_job.sh
echo "A/B done at $(t)"
gunzip -c .ab/libs/s22.so.gz > dash/_C.abi3.so
for c in 1 2 8 32; do
  DASH_DEAL_CHUNK=$c timeout 100 python3 bench/bench_bwd.py --hdim 128 --seqlen 4096 16384 --mask causal --impl dash $W \
    > $OUT/sweep/c${c}_128.txt 2>&1
  DASH_DEAL_CHUNK=$c timeout 60 python3 bench/bench_bwd.py --hdim 64 --seqlen 16384 --mask causal --impl dash $W \
    > $OUT/sweep/c${c}_64.txt 2>&1
  echo "chunk $c at $(t)"; grep -hE "^ *[0-9x]+ +[0-9]+ " $OUT/sweep/c${c}_*.txt
done
PYTHONPATH=$PWD/.ab/fa3:$PYTHONPATH timeout 120 python3 bench/bench_bwd.py --hdim 64 128 --seqlen 2048 4096 8192 16384 \
  --mask causal --impl dash fa3 $W > $OUT/sweep/fa3.txt 2>&1
echo "fa3 rc=$? at $(t)"; grep -E "^ *[0-9x]+ +[0-9]+ " $OUT/sweep/fa3.txt
timeout 60 python3 bench/bench_bwd.py --hdim 192x128 192 --seqlen 4096 16384 --mask causal --impl dash cudnn $W \
  > $OUT/sweep/cudnn.txt 2>&1
echo "cudnn rc=$? at $(t)"; grep -E "^ *[0-9x]+ +[0-9]+ " $OUT/sweep/cudnn.txt
(cd $OUT/sweep && tar czf ../sweep.tgz ./*.txt) && rm -rf $OUT/sweep
