#!/bin/bash
# Session 40, call 3: hdim 96's dQ GEMM as one 64 x 48 instruction a warpgroup (`dq48`; K in 32-byte swizzle
# atoms) against `v96` (call 1's library: V from registers, the dQ GEMM as three 64 x 16 instructions), tests on
# dq48, then dq48 beside FA3 at hdim 96 (`.ab/fa396`).
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
LIBS='.ab/libs/v96.so.gz .ab/libs/dq48.so.gz' ROUNDS=2 SASS=0 TESTS_TIMEOUT=170 \
  TESTS='tests/test_head_dims.py -k "hd96 and not fp16"' \
  BENCH='bench/bench_bwd.py --hdim 96 --seqlen 2048 4096 16384 --mask full causal --impl dash_det dash --warm-s 1 --min-s 0.5;;bench/bench_bwd.py --hdim 96 --seqlen 4096 16384 --mask full causal --impl dash_det dash --softcap 30 --warm-s 1 --min-s 0.5' \
  OUT=$OUT/ab timeout 420 bash bench/ab_job.sh > $OUT/ab_stdout.txt 2>&1
echo "ab rc=$? at $(t)"; grep -A30 "^| bench" $OUT/ab_stdout.txt; grep "tests rc" $OUT/ab_stdout.txt
gunzip -c .ab/libs/dq48.so.gz > dash/_C.abi3.so
mkdir -p .ab/fa396/flash_attn_3 && gunzip -c .ab/fa396z/_C.abi3.so.gz > .ab/fa396/flash_attn_3/_C.abi3.so
cp .ab/fa396z/__init__.py .ab/fa396/flash_attn_3/ && cp .ab/fa396z/flash_attn_interface.py .ab/fa396z/flash_attn_config.py .ab/fa396/
PYTHONPATH=$PWD/.ab/fa396 timeout 130 python3 bench/bench_bwd.py --hdim 96 --seqlen 2048 4096 16384 --mask full causal \
  --impl fa3 fa3_det dash dash_det --warm-s 1 --min-s 0.5 > $OUT/bwd_fa3_h96.txt 2>&1
echo "bench rc=$? at $(t)"; tail -10 $OUT/bwd_fa3_h96.txt
