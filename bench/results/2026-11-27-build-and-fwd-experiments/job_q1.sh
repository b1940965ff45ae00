#!/bin/bash
# Item 117: the forward's Q in two buffers (.ab/qdb: the producer loads tile t + 1's Q, and then
# its first K, while tile t's last steps run) against HEAD, hdim 64 / 128 bf16, A/B in one job.
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
VARIANT=.ab/qdb UNITS='fwd_hdim64_bf16_*,fwd_hdim128_bf16_*' ROUNDS=2 \
BENCH='bench/bench_fwd.py --hdims 64 128 --seqlens 512 2048 4096 16384 --masks full causal --impls dash --warm-s 1 --min-s 0.5' \
TESTS='tests/test_fwd.py tests/test_varlen.py -k "not float16 and not fp16"' \
bash bench/ab_job.sh
