#!/bin/bash
# Prepared for the next session (not run): issue 15's backward grid beside FlashAttention-3 on main
# after session 20 (.ab/libs/4804022.so.gz: hdim 64 masks after dS, RESULTS item 167), the same
# grid as 2026-11-28-full-split/job_p1.sh (item 158; dash det first in each process, behind the
# settle run), with --clocks; then Nsight's stall samples of the new hdim 64 causal kernel beside
# FA3's (job_n2.sh with LIB=4804022) to see where item 166's excess went. Prediction from item 167's
# A/B: hdim 64 full det / FA3 non-det 1.015-1.05 (was 0.995-1.015), hdim 64 causal 0.935-0.995 (was
# 0.931-0.990), hdim 128 unchanged (0.96-1.03). Carry .ab/libs/4804022.so.gz and .ab/fa3. About 8
# minutes: split it over two calls if the budget is short (the ncu part is 1 minute).
START=$(date +%s)
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
gunzip -c .ab/libs/4804022.so.gz > dash/_C.abi3.so
W="--warm-s 1 --min-s 0.5"
PYTHONPATH=$PWD/.ab/fa3:$PYTHONPATH timeout 330 python3 bench/bench_bwd.py --hdim 64 128 --seqlen 2048 4096 8192 16384 \
  --mask full causal --impl dash_det dash fa3_det fa3 $W --clocks --out $OUT/grid > $OUT/bwd_fa3.txt 2>&1
echo "grid rc=$? at $(( $(date +%s) - START ))s"; grep -E "^ *[0-9x]+ +[0-9]+ " $OUT/bwd_fa3.txt
LIB=4804022 OUT=$OUT/ncu bash bench/results/2026-11-28-causal-gap/job_n2.sh > $OUT/ncu.log 2>&1
echo "ncu done at $(( $(date +%s) - START ))s"; grep -E "^== |total samples" $OUT/ncu.log
