#!/bin/bash
# Session 40, call 1: hdim 96's backward with dP^T's V from registers (`v96`: trait "bwd_dp_v": "registers",
# units fwd/bwd_hdim96_bf16_*) against main's library (every unit), tests on v96, then the A/B.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
LIBS='.ab/libs/main.so.gz .ab/libs/v96.so.gz' ROUNDS=2 SASS=0 TESTS_TIMEOUT=170 \
  TESTS='tests/test_head_dims.py -k "hd96 and not fp16"' \
  BENCH='bench/bench_bwd.py --hdim 96 --seqlen 2048 4096 16384 --mask full causal --impl dash_det dash --warm-s 1 --min-s 0.5;;bench/bench_bwd.py --hdim 96 --seqlen 4096 16384 --mask full causal --impl dash_det dash --softcap 30 --warm-s 1 --min-s 0.5' \
  OUT=$OUT/ab timeout 560 bash bench/ab_job.sh > $OUT/ab_stdout.txt 2>&1
echo "ab rc=$? at $(t)"; tail -30 $OUT/ab_stdout.txt
