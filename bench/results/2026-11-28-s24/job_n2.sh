#!/bin/bash
# Session 24, second call: the packed-document mixes beside FlashAttention-3 (varlen build, fwd and
# bwd; issue 15's "same ratios for packed mixes"), the forward grid beside FA3 on main's kernels,
# the sliding-window bars against Flex, softcap's cost at 256 / 192 x 128 (issue 13), and 192 x 128
# causal non-det against cuDNN once more (0.986 at 16k in job_n1, 1.04 in item 177).
# Needs main's library (.ab/libs/main.so.gz) and FA3 with varlen (.ab/fa3v: carry both).
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
[ -f .ab/libs/main.so.gz ] && gunzip -c .ab/libs/main.so.gz > dash/_C.abi3.so
export PYTHONPATH=$PWD/.ab/fa3v
W='--warm-s 1 --min-s 0.5'
timeout 60 python3 bench/bench_varlen.py --impl dash_det dash fa3_det fa3 $W --out $OUT/v1 > $OUT/varlen_bwd.txt 2>&1
echo "varlen bwd MHA rc=$? at $(t)"; cat $OUT/varlen_bwd.txt | tail -4
timeout 60 python3 bench/bench_varlen.py --heads 32 --heads-kv 8 --impl dash_det dash fa3_det fa3 $W --out $OUT/v2 > $OUT/varlen_bwd_gqa.txt 2>&1
echo "varlen bwd GQA rc=$? at $(t)"; cat $OUT/varlen_bwd_gqa.txt | tail -4
timeout 40 python3 bench/bench_varlen.py --pass fwd --impl dash fa3 $W --out $OUT/v3 > $OUT/varlen_fwd.txt 2>&1
echo "varlen fwd MHA rc=$? at $(t)"; cat $OUT/varlen_fwd.txt | tail -4
timeout 40 python3 bench/bench_varlen.py --pass fwd --heads 32 --heads-kv 8 --impl dash fa3 $W --out $OUT/v4 > $OUT/varlen_fwd_gqa.txt 2>&1
echo "varlen fwd GQA rc=$? at $(t)"; cat $OUT/varlen_fwd_gqa.txt | tail -4
timeout 150 python3 bench/bench_fwd.py --hdims 64 128 --seqlens 512 1024 2048 4096 8192 16384 --masks causal full \
  --impls dash fa3 $W --out $OUT/f1 > $OUT/fwd_fa3.txt 2>&1
echo "fwd grid rc=$? at $(t)"; grep -E "^\|" $OUT/fwd_fa3.txt
timeout 45 python3 bench/bench_bwd.py --hdim 192x128 --seqlen 8192 16384 --mask causal --impl dash cudnn $W --out $OUT/b1 > $OUT/bwd_192x128_cudnn.txt 2>&1
echo "192x128 vs cuDNN rc=$? at $(t)"; grep -E "^ *[0-9x]+ +[0-9]+ " $OUT/bwd_192x128_cudnn.txt
for cap in 0 30; do
  timeout 50 python3 bench/bench_bwd.py --hdim 256 192x128 --seqlen 4096 16384 --mask causal full \
    --impl dash_det --softcap $cap $W --out $OUT/c$cap > $OUT/bwd_hd_cap$cap.txt 2>&1
  echo "bwd 256 / 192x128 softcap $cap rc=$? at $(t)"; grep -E "^ *[0-9x]+ +[0-9]+ " $OUT/bwd_hd_cap$cap.txt
done
timeout 120 python3 bench/bench_bwd.py --hdim 128 --seqlen 16384 32768 --total-tokens 32768 --mask causal --window 4096 \
  --impl dash_det dash flex $W --out $OUT/w1 > $OUT/bwd_window.txt 2>&1
echo "window bwd rc=$? at $(t)"; grep -E "^ *[0-9x]+ +[0-9]+ " $OUT/bwd_window.txt
