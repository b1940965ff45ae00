#!/bin/bash
# Upper bound, not a candidate: the backward without the per-step dS-ready barrier between the two
# MMA warpgroups (no_ds_barrier.patch; its dQ is WRONG: a warpgroup's dQ GEMM may read the other's
# dS before it is written), against HEAD, both built on the GPU machine. How much of the step the
# warpgroups lose meeting at that barrier bounds what decoupling them (each warpgroup's dQ partial
# from its own keys) could gain. No tests (the variant's dQ is wrong by design).
# Carry .site and .ab/nobar.
VARIANT=.ab/nobar UNITS='fwd_hdim64_bf16_*,fwd_hdim128_bf16_*,bwd_hdim64_bf16_full,bwd_hdim64_bf16_band,bwd_hdim128_bf16_full,bwd_hdim128_bf16_band' ROUNDS=2 \
BENCH='bench/bench_bwd.py --hdim 64 128 --seqlen 4096 16384 --mask full causal --impl dash_det dash --warm-s 1 --min-s 0.5' \
bash bench/ab_job.sh
