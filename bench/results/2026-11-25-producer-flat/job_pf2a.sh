#!/bin/bash
# Item 110, the adopted form: the producer's step loops with the first step peeled (nested Q tile /
# head loops, compile-time tile sizes, QWalk::next), 40 registers at every two-warpgroup head dim
# (hdim 128's softcap kernel keeps 24), against HEAD c8b6af2's kernels. Both are whole libraries
# built on the CI machine (base: last session's final8 = c8b6af2's kernels; f40: this tree), gzip'd
# into .ab/ and carried; two rounds, alternately.
export PYTHONPATH=$PWD
LIBS='.ab/base.so.gz .ab/f40.so.gz' ROUNDS=2 \
BENCH='bench/bench_bwd.py --hdim 128 64 96 256 --seqlen 4096 16384 --mask causal full --impl dash_det --warm-s 1 --min-s 0.5 ;; bench/bench_varlen.py --hdim 128 --mix long short --impl dash_det --warm-s 1 --min-s 0.5' \
OUT=$OUT timeout 590 bash bench/ab_job.sh
