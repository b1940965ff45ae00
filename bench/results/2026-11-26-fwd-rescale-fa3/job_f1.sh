#!/bin/bash
# Item 111, first call: the hdim 128 full-mask forward with FlashAttention-3's 128 x 176 tile.
# Libraries built on the CI machine with DASH_INSTANTIATIONS='fwd_hdim128_bf16_*,fwd_hdim64_bf16_*':
#   base  HEAD f82865d (128 x 128, O staged through two 64-row smem slices)
#   f176  128 x 176 at the full mask, O stored from the registers (two slices do not fit)
#   v2    128 x 176, O staged through one 64-row slice the warpgroups take in turn
# Forward tests on both variants, then base / f176 / v2 alternately, two rounds, then FA3 beside
# the variants.
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
for lib in f176 v2; do
  gunzip -c .ab/libs/$lib.so.gz > dash/_C.abi3.so
  timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_fwd.py tests/test_varlen.py tests/test_gqa.py \
    -k "not fp16 and not float16" > $OUT/tests_$lib.txt 2>&1
  echo "$lib tests: $(grep -E 'passed|failed' $OUT/tests_$lib.txt | tail -1)"
done
LIBS='.ab/libs/base.so.gz .ab/libs/f176.so.gz .ab/libs/v2.so.gz' ROUNDS=2 \
BENCH='bench/bench_fwd.py --hdims 128 --seqlens 512 1024 2048 4096 8192 16384 --masks full --impls dash --warm-s 1 --min-s 0.5' \
OUT=$OUT/ab timeout 330 bash bench/ab_job.sh 2>&1 | tail -12
export PYTHONPATH=$PWD/.ab/fa3:$PWD
for lib in base v2; do
  gunzip -c .ab/libs/$lib.so.gz > dash/_C.abi3.so
  echo "== $lib beside FA3"
  timeout 150 python3 bench/bench_fwd.py --hdims 128 --seqlens 512 1024 2048 4096 8192 16384 --masks full causal --impls dash fa3 \
    --warm-s 1 --min-s 0.5 2>&1 | grep -v -i warn | grep "^|" | tee $OUT/fa3_$lib.txt
done
