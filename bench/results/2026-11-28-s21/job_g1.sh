#!/bin/bash
# Session 21, first call: issue 15's backward grid beside FlashAttention-3 on main (4f6b186; the
# hdim 64 / 128 bf16 units built here as .ab/libs/m4f6b.so.gz, the kernels of 4804022), the job
# prepared last session as 2026-11-28-detsplit/job_n4.sh, then Nsight's stall samples of the new hdim
# 64 causal kernel (causal-gap/job_n2.sh). Prediction (item 167's A/B): hdim 64 full det / FA3
# non-det 1.015-1.05 (was 0.995-1.015), hdim 64 causal 0.935-0.995 (was 0.931-0.990), 128 unchanged.
# Carry .ab/libs/m4f6b.so.gz and .ab/fa3.
START=$(date +%s)
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
gunzip -c .ab/libs/m4f6b.so.gz > dash/_C.abi3.so
W="--warm-s 1 --min-s 0.5"
PYTHONPATH=$PWD/.ab/fa3:$PYTHONPATH timeout 330 python3 bench/bench_bwd.py --hdim 64 128 --seqlen 2048 4096 8192 16384 \
  --mask full causal --impl dash_det dash fa3_det fa3 $W --clocks --out $OUT/grid > $OUT/bwd_fa3.txt 2>&1
echo "grid rc=$? at $(( $(date +%s) - START ))s"; grep -E "^ *[0-9x]+ +[0-9]+ " $OUT/bwd_fa3.txt
LIB=m4f6b OUT=$OUT/ncu bash bench/results/2026-11-28-causal-gap/job_n2.sh > $OUT/ncu.log 2>&1
echo "ncu done at $(( $(date +%s) - START ))s"; grep -E "^== |total samples" $OUT/ncu.log
(cd $OUT && tar czf grid.tgz grid && rm -rf grid)
