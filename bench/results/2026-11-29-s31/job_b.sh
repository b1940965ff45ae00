#!/bin/bash
# Session 31's second call. Carry .ab/libs/main.so.gz (e728ba1's kernels), .ab/libs/s64d.so.gz (hdim 64
# bf16 forward units and the softcap backward units d78a894 landed: 128 x 128, D read once dP lands),
# .ab/libs/s64e.so.gz (the same, the softcap step compiled once per mask flag, "two_bodies", as hdim
# 64's plain kernels are) and .ab/fa3sc (FlashAttention-3's hopper/ at 0251105a built here with softcap:
# hdim 64 / 128, bf16, no varlen, no local).
# (1) s64e against s64d, hdim 64 softcap 30 backward, two rounds. check_sass (unit objects): band 1937,
#     full 1772 instructions (both bodies), no LDL / STL in either loop. Prediction: causal +1-3% (the
#     plain kernels' two_bodies gain was +2.6-3.3% causal, item 171), full -1..+1%.
# (2) Softcap 30 backward beside FA3 with softcap: hdim 64 on s64d (plain on main in the same process
#     order), hdim 128 on main (its softcap kernels are d78a894's), 2k / 4k / 16k. Prediction: hdim 64
#     det / FA3 non-det 1.25-1.30 full, 0.95-1.03 causal (item 223: 1.20-1.21 / 0.90-0.97, plus item
#     228's +4-6.5%); hdim 128 0.98-1.02 (0.96-1.00 plus item 224's +1.5-2.4%).
# (3) hdim 128's plain forward at 2k / 4k beside this FA3 build (session 30's job_next.sh (2)).
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
B="bench/bench_bwd.py --hdim 64 --seqlen 2048 4096 16384 --mask full causal --impl dash_det dash --softcap 30 --warm-s 1 --min-s 0.5"
LIBS='.ab/libs/s64d.so.gz .ab/libs/s64e.so.gz' BENCH="$B" ROUNDS=2 SASS=0 OUT=$OUT/ab bash bench/ab_job.sh 2>&1 | tail -9
echo "ab done at $(t)"
run() {  # lib hdim cap
  gunzip -c .ab/libs/$1.so.gz > dash/_C.abi3.so
  PYTHONPATH=$PWD/.ab/fa3sc timeout 110 python3 bench/bench_bwd.py --hdim $2 --seqlen 2048 4096 16384 --mask full causal \
    --impl dash_det dash fa3 fa3_det --softcap $3 --warm-s 1 --min-s 0.5 > $OUT/bwd_fa3sc_h$2_cap$3.txt 2>&1
  echo "bwd $1 hdim $2 softcap $3 rc=$? at $(t)"; grep -E "^ +[0-9]" $OUT/bwd_fa3sc_h$2_cap$3.txt
}
run main 64 0; run s64d 64 30; run main 128 30
gunzip -c .ab/libs/main.so.gz > dash/_C.abi3.so
PYTHONPATH=$PWD/.ab/fa3sc timeout 60 python3 bench/bench_fwd.py --hdims 128 --seqlens 2048 4096 --masks causal full \
  --impls dash fa3 --warm-s 1 --min-s 0.5 > $OUT/fwd_fa3sc.txt 2>&1; echo "fwd rc=$? at $(t)"; tail -8 $OUT/fwd_fa3sc.txt
echo "all done at $(t)"
