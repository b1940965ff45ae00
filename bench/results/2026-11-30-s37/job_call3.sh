#!/bin/bash
# Session 37, call 3: the landed library (`land`: main e97175c, every unit; hdim 64's direct-epilogue
# kernel back to one Q buffer, trait `fwd_q_buffers`) against HEAD-before-q2 (`fdfull`) at hdim 64 and
# hdim 128's points where q2 moved, then beside FlashAttention-3 0251105a (.ab/fa3v) in both orders.
# Carry .ab/libs/land.so.gz .ab/libs/fdfull.so.gz .ab/fa3v.
# Prediction: hdim 64 full within +-0.5% of fdfull (one Q buffer again, K first: item 194's reorder at
# 128 was neutral), hdim 64 causal 512 / 1k +1.7 / +2.3% (short walk, two buffers, as call 2);
# hdim 128 full 1k / 2k +1-2.5%. Beside FA3: hdim 128 full 2k 1.012 -> ~1.03; the rest as item 254.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
LIBS='.ab/libs/fdfull.so.gz .ab/libs/land.so.gz' ROUNDS=2 SASS=0 \
  BENCH='bench/bench_fwd.py --hdims 64 --seqlens 512 1024 2048 4096 16384 --masks causal full --impls dash --warm-s 1 --min-s 0.5;;bench/bench_fwd.py --hdims 128 --seqlens 1024 2048 4096 --masks causal full --impls dash --warm-s 1 --min-s 0.5' \
  OUT=$OUT/ab timeout 300 bash bench/ab_job.sh > $OUT/ab_stdout.txt 2>&1
echo "ab rc=$? at $(t)"
gunzip -c .ab/libs/land.so.gz > dash/_C.abi3.so
G='--warm-s 1 --min-s 0.5'
for order in "dash fa3" "fa3 dash"; do
  tag=$(echo $order | tr ' ' _)
  PYTHONPATH=$PWD/.ab/fa3v timeout 140 python3 bench/bench_fwd.py $G --hdims 64 128 --seqlens 1024 2048 4096 8192 16384 \
    --masks causal full --impls $order > $OUT/grid_$tag.txt 2>&1
  echo "grid $tag rc=$? at $(t)"
done
tail -32 $OUT/ab_stdout.txt
grep -h -E "^\|" $OUT/grid_*.txt
