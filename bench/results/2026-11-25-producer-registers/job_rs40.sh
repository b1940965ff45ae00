#!/bin/bash
# Item 109: the backward with its producer warpgroup at 40 registers (MMA 232) for every two-warpgroup
# head dim ("rs40": bwd/config.h's split changed by hand; rs56: 56 / 224, checked with check_sass only),
# against HEAD's kernels. Libraries built on the CI machine with
# DASH_INSTANTIATIONS='{fwd,bwd}_hdim{64,128}_bf16_{band,full}', gzip'd into .ab/ and carried.
export PYTHONPATH=$PWD
LIBS='.ab/base.so.gz .ab/rs40.so.gz' ROUNDS=3 \
TESTS='tests/test_bwd_correctness.py tests/test_determinism.py tests/test_deadlock.py tests/test_varlen.py -k "not softcap and not float16 and not fp16 and not 96 and not 192 and not 256"' \
BENCH='bench/bench_bwd.py --hdim 64 128 --seqlen 2048 4096 16384 --mask causal full --impl dash_det --warm-s 1 --min-s 0.5 ;; bench/bench_varlen.py --mix long short --impl dash_det --warm-s 1 --min-s 0.5' \
OUT=$OUT timeout 590 bash bench/ab_job.sh
