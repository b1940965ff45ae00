#!/bin/bash
# Item 114: the lazy rescale decided per row (each row keeps or moves its own max; the warp's vote
# only gates O's multiplications), on at hdim 64 and 128 ("perrow", units fwd_hdim{64,128}_bf16_*),
# against the final library of item 113 (per-warp decision, hdim 128 only). Forward tests of
# perrow's units, then final / perrow alternately, two rounds.
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
gunzip -c .ab/libs/perrow.so.gz > dash/_C.abi3.so
timeout 100 python3 -m pytest -q -p no:cacheprovider tests/test_fwd.py tests/test_varlen.py -k "not fp16 and not float16" \
  > $OUT/tests_perrow.txt 2>&1
echo "perrow tests: $(grep -E 'passed|failed' $OUT/tests_perrow.txt | tail -1);" \
  "failures not for a unit this build lacks: $(grep -E '^E ' $OUT/tests_perrow.txt | grep -vc 'this build has no')"
LIBS='.ab/libs/final.so.gz .ab/libs/perrow.so.gz' ROUNDS=2 \
BENCH='bench/bench_fwd.py --hdims 128 64 --seqlens 2048 4096 16384 --masks full causal --impls dash --warm-s 1 --min-s 0.5' \
OUT=$OUT/ab timeout 300 bash bench/ab_job.sh 2>&1 | tail -16
