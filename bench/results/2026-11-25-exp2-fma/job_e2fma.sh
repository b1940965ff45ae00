#!/bin/bash
# Item 107: the forward's exponentials partly on the FMA pipe (exp2_fma.patch with
# DASH_FWD_EXP2_FMA_EVERY = 8 / 4 / 2), against HEAD's kernels. Libraries built on the CI machine
# with DASH_INSTANTIATIONS='fwd_hdim64_bf16_band,fwd_hdim64_bf16_full,fwd_hdim128_bf16_band,fwd_hdim128_bf16_full'
# (base: those units and the backward's), gzip'd into .ab/ and carried.
export PYTHONPATH=$PWD
LIBS='.ab/base.so.gz .ab/e8.so.gz .ab/e4.so.gz .ab/e2.so.gz' ROUNDS=2 \
TESTS='tests/test_fwd.py -k "not fp16 and not opcheck_attn_bwd"' \
BENCH='bench/bench_fwd.py --hdims 64 128 --seqlens 2048 4096 16384 --masks full causal --impls dash --warm-s 1 --min-s 0.5 ;; bench/bench_fwd.py --hdims 64 128 --seqlens 16384 --masks full causal --impls dash --softcap 30 --warm-s 1 --min-s 0.5' \
OUT=$OUT timeout 590 bash bench/ab_job.sh
