#!/bin/bash
# Prepared for the next session (not run here: device time ran out): base (HEAD's fwd_hdim64_bf16_*
# units) against st64b (st64_nospill.patch: hdim 64's staged epilogue without its per-tile spills),
# both built on the CI machine with DASH_INSTANTIATIONS='fwd_hdim64_bf16_*' and carried
# (.ab/built/base64.so.gz, .ab/built/st64b.so.gz). Carry .ab/built.
LIBS='.ab/built/base64.so.gz .ab/built/st64b.so.gz' ROUNDS=3 \
BENCH='bench/bench_fwd.py --hdims 64 --seqlens 512 1024 2048 4096 8192 16384 --masks full causal --impls dash --warm-s 1 --min-s 0.5' \
TESTS='tests/test_fwd.py -k "64 and not float16 and not fp16"' \
bash bench/ab_job.sh
