#!/bin/bash
# Item 112: the forward's lazy rescale (the running max may lag by 8 log2 units; O rescaled only
# when some row of the warp grows past it). Libraries built on the CI machine with
# DASH_INSTANTIATIONS='fwd_hdim128_bf16_*,fwd_hdim64_bf16_*':
#   base  HEAD f82865d
#   lazy  the lazy rescale, placement as the trait table says (hdim 128: before P V, branch inside the turn)
#   v4    the lazy rescale, after P V at every head dim
# Forward tests on lazy and v4 (bf16 units only), then base / lazy / v4 alternately, two rounds.
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
for lib in lazy v4; do
  gunzip -c .ab/libs/$lib.so.gz > dash/_C.abi3.so
  timeout 100 python3 -m pytest -q -p no:cacheprovider tests/test_fwd.py tests/test_varlen.py tests/test_gqa.py tests/test_window.py \
    -k "not fp16 and not float16" > $OUT/tests_$lib.txt 2>&1
  echo "$lib tests: $(grep -E 'passed|failed' $OUT/tests_$lib.txt | tail -1);" \
    "failures not for a unit this build lacks: $(grep -E '^E ' $OUT/tests_$lib.txt | grep -vc 'this build has no')"
done
LIBS='.ab/libs/base.so.gz .ab/libs/lazy.so.gz .ab/libs/v4.so.gz' ROUNDS=2 \
BENCH='bench/bench_fwd.py --hdims 128 64 --seqlens 2048 4096 16384 --masks full causal --impls dash --warm-s 1 --min-s 0.5' \
OUT=$OUT/ab timeout 420 bash bench/ab_job.sh 2>&1 | tail -16
