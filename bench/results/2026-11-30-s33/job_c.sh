#!/bin/bash
# Call 3 (session 33). Carry .ab/libs/s33.so.gz (this session's tree, every unit) and .ab/libs/v96b2.so.gz
# (hdim 96 bf16 forward and backward units only, the trait table's 96 entry with "bwd_mask": "two_bodies":
# the backward step compiled once for masked and once for unmasked steps, plain and softcap kernels alike;
# check_sass here: MMA loops 595 -> 901 (full), 681 -> 985 (band), softcap 874 -> 1164, 964 -> 1248, no LDL / STL).
# (1) A/B s33 / v96b2, hdim 96 backward, det and non-det, plain and softcap 30, 2k / 4k / 16k, both masks, two
#     rounds. Prediction (between hdim 64's +2.6-3.3% causal / -0.3..-0.6% full and hdim 128's -1.3..-3.1%, with
#     hdim 128's softcap full +1.0-1.5%): plain causal 0..+2%, full -1..+1%; softcap +0.5..+2%.
# (2) hdim 96's tests of test_head_dims on v96b2 (its fp16 cases have no kernel in this partial library).
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
LIBS='.ab/libs/s33.so.gz .ab/libs/v96b2.so.gz' \
  BENCH='bench/bench_bwd.py --hdim 96 --seqlen 2048 4096 16384 --mask full causal --impl dash_det dash --warm-s 1 --min-s 0.5;;bench/bench_bwd.py --hdim 96 --seqlen 2048 4096 16384 --mask full causal --impl dash_det dash --softcap 30 --warm-s 1 --min-s 0.5' \
  TESTS='tests/test_head_dims.py -k hd96' TESTS_TIMEOUT=120 \
  ROUNDS=2 SASS=0 OUT=$OUT/ab bash bench/ab_job.sh > $OUT/ab.log 2>&1
echo "ab rc=$? at $(t)"; cat $OUT/ab/summary.txt 2>/dev/null || tail -20 $OUT/ab.log
tail -3 $OUT/ab.log
echo "all done at $(t)"
