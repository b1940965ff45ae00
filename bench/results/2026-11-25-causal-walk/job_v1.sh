#!/bin/bash
# final5 (HEAD) vs bulk (forward O stores by the bulk-copy engine, a row per copy, warps not waiting);
# then dash vs FA3 (built with softcap) plain and with softcap 30, forward and backward.
export PYTHONPATH=$PWD
LIBS='.ab/libs/final5.so.gz .ab/libs/bulk.so.gz' ROUNDS=2 \
BENCH='bench/bench_fwd.py --hdims 128 96 --seqlens 2048 4096 16384 --masks full causal --impls dash --warm-s 1 --min-s 0.5' \
TESTS='tests/test_fwd.py tests/test_head_dims.py tests/test_varlen.py tests/test_window.py -k "(forward or matches_reference or fwd) and not backward and not fp16 and not float16 and not 64 and not 192 and not 256"' \
bash bench/ab_job.sh 2>&1 | grep -v "^== \|;"
grep -E "passed|failed" $OUT/tests_bulk.txt 2>/dev/null | tail -3; (cd $OUT && tar xzf logs.tgz tests_bulk.txt 2>/dev/null; grep -E "passed|failed|Error" tests_bulk.txt | tail -5)
gunzip -c .ab/libs/final5.so.gz > dash/_C.abi3.so
export PYTHONPATH=$PWD/.ab/fa3cap:$PWD
for cap in 0 30; do
  timeout 150 python3 bench/bench_fwd.py --hdims 64 128 --seqlens 4096 16384 --masks full causal --impls dash fa3 --softcap $cap --warm-s 1 --min-s 0.5 > $OUT/fwd_cap$cap.txt 2>&1
  grep -E "^\| (64|128) " $OUT/fwd_cap$cap.txt
done
for cap in 0 30; do
  timeout 200 python3 bench/bench_bwd.py --hdim 64 128 --seqlen 4096 16384 --mask full causal --impl dash_det fa3 --softcap $cap --warm-s 1 --min-s 0.5 > $OUT/bwd_cap$cap.txt 2>&1
  grep -E "^\| (64|128) " $OUT/bwd_cap$cap.txt
done
