#!/bin/bash
# Item 110: the backward's producer at 40 registers at every two-warpgroup head dim, with and
# without the flattened step loop (compile-time tile sizes, QWalk::next, K / V load peeled off the
# step loop), against HEAD's kernels. Libraries built on the CI machine with
# DASH_INSTANTIATIONS='{fwd,bwd}_hdim{64,128,96,256}_bf16_{band,full}' (one tree, incremental),
# gzip'd into .ab/ and carried: base (HEAD c8b6af2), flat40 (both changes), rs40 (registers only).
export PYTHONPATH=$PWD
LIBS='.ab/base.so.gz .ab/flat40.so.gz .ab/rs40.so.gz' ROUNDS=2 \
BENCH='bench/bench_bwd.py --hdim 128 64 96 256 --seqlen 4096 16384 --mask causal full --impl dash_det --warm-s 1 --min-s 0.5 ;; bench/bench_varlen.py --hdim 128 --mix long short --impl dash_det --warm-s 1 --min-s 0.5' \
OUT=$OUT timeout 590 bash bench/ab_job.sh
