#!/bin/bash
# Session 38, call 3: the backward beside FlashAttention-3 0251105a (.ab/fa3v) on main's library (`land`,
# e97175c's kernels; the plain backward at hdim 64 / 128 last beside FA3 in session 26, item 202's table,
# and on Llama / packed in session 27): the MHA grid (hdim 64 / 128, 2k-16k, both masks), Llama-3-8B's GQA
# shape (hidden 4096, 8 K/V heads) and the packed mixes (MHA and GQA), dash det / non-det and FA3 det /
# non-det, dash first. Carry .ab/libs/land.so.gz .ab/fa3v.
# Prediction: within +-1.5% of session 26's table (det / FA3 non-det 1.00-1.07 at 2k-4k, 0.965-0.995 at
# 8k-16k; det / FA3 det 0.99-1.31); Llama 0.98-1.05, packed mixes 1.05-1.4 (session 27).
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/.ab/fa3v:${PYTHONPATH:-}
gunzip -c .ab/libs/land.so.gz > dash/_C.abi3.so
G='--warm-s 1 --min-s 0.5'
timeout 300 python3 bench/bench_bwd.py $G --hdim 128 64 --seqlen 2048 4096 8192 16384 --mask causal full \
  --impl dash_det dash fa3_det fa3 --out $OUT/b1 > $OUT/bwd_grid.txt 2>&1
echo "grid rc=$? at $(t)"
timeout 130 python3 bench/bench_bwd.py $G --hdim 128 --hidden 4096 --heads-kv 8 --seqlen 2048 4096 16384 \
  --mask causal full --impl dash_det dash fa3_det fa3 --out $OUT/b2 > $OUT/bwd_llama.txt 2>&1
echo "llama rc=$? at $(t)"
for kv in 16 8; do  # MHA (bench_varlen's default 16 heads) and GQA (32 query heads, 8 K/V heads)
  h=16; [ $kv = 8 ] && h=32
  timeout 60 python3 bench/bench_varlen.py $G --mix long short --heads $h --heads-kv $kv \
    --impl dash_det dash fa3_det fa3 --out $OUT/b3_$kv > $OUT/bwd_packed_kv$kv.txt 2>&1
  echo "packed kv $kv rc=$? at $(t)"
done
grep -h -E "^\|" $OUT/bwd_grid.txt $OUT/bwd_llama.txt
tail -12 $OUT/bwd_packed_kv16.txt $OUT/bwd_packed_kv8.txt
(cd $OUT && tar czf logs.tgz *.txt b1 b2 b3_16 b3_8 && rm -rf b1 b2 b3_16 b3_8)
