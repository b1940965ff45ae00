#!/bin/bash
# The backward's dV GEMM issued right after the P pass (dv_before_ds.patch), so it runs while the
# dS pass does, against HEAD: hdim 128 (hdim 64's MMA loop spills with it: not measured).
# Libraries of fwd_hdim{64,128}_bf16_*, bwd_hdim{64,128}_bf16_{band,full} built on the CI
# machine (e2base: HEAD; dvb: the patch). Carry .ab/built.
LIBS='.ab/built/e2base.so.gz .ab/built/dvb.so.gz' ROUNDS=3 \
BENCH='bench/bench_bwd.py --hdim 128 --seqlen 2048 4096 8192 16384 --mask full causal --impl dash_det dash --warm-s 1 --min-s 0.5' \
TESTS='tests/test_bwd_correctness.py tests/test_determinism.py tests/test_invariance.py -k "128 and not float16 and not fp16 and not softcap"' \
bash bench/ab_job.sh
