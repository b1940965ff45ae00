#!/bin/bash
# Prepared for the next session (not run here): at 192 and 256 the lazy rescale with O rescaled
# before P V (bpv.patch), as hdim 64 takes it, against HEAD's after P V; libraries of the
# fwd_hdim192_bf16_* and fwd_hdim256_bf16_* units built on the CI machine and carried
# (.ab/built/base_hd.so.gz, .ab/built/bpv.so.gz). Carry .ab/built.
LIBS='.ab/built/base_hd.so.gz .ab/built/bpv.so.gz' ROUNDS=2 \
BENCH='bench/bench_fwd.py --hdims 192 256 --seqlens 2048 4096 16384 --masks full causal --impls dash --warm-s 1 --min-s 0.5' \
TESTS='tests/test_fwd.py tests/test_head_dims.py -k "(192 or 256) and not float16 and not fp16"' \
bash bench/ab_job.sh
