#!/bin/bash
# Session 43, call 1: hdim 256's backward adding dQ from the MMA warpgroups' registers (`dqr`: trait
# "bwd_dq_add": "registers"; no staging buffer, so two Q and two dO stages; the turn keeper warp takes each
# tile's turn in deterministic mode; non-det unordered) against `land41`: hdim 256's bf16 GPU tests on dqr
# first, then two rounds of both modes, then FlashAttention-3's non-det backward at 256 in one process.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/dqr.so.gz > dash/_C.abi3.so
timeout 200 python3 -m pytest -x -q tests/test_head_dims.py tests/test_determinism.py tests/test_deadlock.py \
  -k "256 and not fp16 and not float16 and not softcap" > $OUT/tests_dqr.txt 2>&1
echo "tests rc=$? at $(t)"; tail -5 $OUT/tests_dqr.txt
LIBS='.ab/libs/land41.so.gz .ab/libs/dqr.so.gz' ROUNDS=2 SASS=0 \
  BENCH='bench/bench_bwd.py --hdim 256 --seqlen 2048 4096 16384 --mask full causal --impl dash_det dash --warm-s 1 --min-s 0.5' \
  OUT=$OUT/ab timeout 330 bash bench/ab_job.sh > $OUT/ab_stdout.txt 2>&1
echo "ab rc=$? at $(t)"; grep -A30 "^| bench" $OUT/ab_stdout.txt | head -40
P=.ab/fa3_192_256; mkdir -p $P/flash_attn_3 && gunzip -c .ab/fa3z/_C.abi3.so.gz > $P/flash_attn_3/_C.abi3.so
cp .ab/fa3z/__init__.py $P/flash_attn_3/ && cp .ab/fa3z/flash_attn_interface.py .ab/fa3z/flash_attn_config.py $P/
gunzip -c .ab/libs/dqr.so.gz > dash/_C.abi3.so
PYTHONPATH=$PWD/$P timeout 120 python3 bench/bench_bwd.py --hdim 256 --seqlen 2048 4096 16384 --mask full causal \
  --impl dash_det dash fa3 --warm-s 1 --min-s 0.5 > $OUT/fa3_dqr.txt 2>&1
echo "fa3 rc=$? at $(t)"; cat $OUT/fa3_dqr.txt | tail -20
