#!/bin/bash
# Session 31's third call. Carry .ab/libs/main.so.gz (e728ba1's kernels), .ab/libs/s64e.so.gz (hdim 64 bf16
# forward units and f0d3ac0's softcap backward units), .ab/libs/s128f.so.gz (hdim 128 bf16 forward units
# and the full-mask softcap backward unit compiled once per mask flag) and .ab/fa3sc (FlashAttention-3's
# hopper/ at 0251105a built here with softcap: hdim 64 / 128 bf16, no varlen, no local).
# (A) hdim 128's full-mask softcap backward compiled once per mask flag (s128f) against main, two rounds.
#     check_sass: MMA loop 1060 instructions (both bodies; one body 832), no LDL / STL; the band kernel so
#     compiled spills 25 in its loop (unit object), so only the full mask is tried. Prediction: +2-6% det
#     and non-det (hdim 64's full masks gained 8.6-9.7% so, item 232; at hdim 128 the P pass is a smaller
#     share of the step).
# (B) hdim 64 softcap 30 backward on f0d3ac0's kernels (s64e) beside FA3 with softcap, and plain on main.
#     Prediction: det / FA3 non-det 1.40-1.46 full, 1.04-1.15 causal (item 233's f0d3ac0 column);
#     softcap's cost 10-14%.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
B="bench/bench_bwd.py --hdim 128 --seqlen 2048 4096 16384 --mask full --impl dash_det dash --softcap 30 --warm-s 1 --min-s 0.5"
LIBS='.ab/libs/main.so.gz .ab/libs/s128f.so.gz' BENCH="$B" ROUNDS=2 SASS=0 OUT=$OUT/ab bash bench/ab_job.sh 2>&1 | tail -6
echo "ab done at $(t)"
for cap in 0 30; do
  if [ $cap = 0 ]; then lib=main; else lib=s64e; fi
  gunzip -c .ab/libs/$lib.so.gz > dash/_C.abi3.so
  PYTHONPATH=$PWD/.ab/fa3sc timeout 100 python3 bench/bench_bwd.py --hdim 64 --seqlen 2048 4096 16384 --mask full causal \
    --impl dash_det dash fa3 fa3_det --softcap $cap --warm-s 1 --min-s 0.5 > $OUT/bwd_h64_cap$cap.txt 2>&1
  echo "bwd $lib hdim 64 softcap $cap rc=$? at $(t)"; grep -E "^ +[0-9]" $OUT/bwd_h64_cap$cap.txt
done
echo "all done at $(t)"
