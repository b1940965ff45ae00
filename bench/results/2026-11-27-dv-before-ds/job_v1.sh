#!/bin/bash
# A/B (bench/ab_job.sh, LIBS mode, two rounds): final2 = the library .ci/run built from 9a53fa8;
# dv = this tree's 192 / 192x128 bf16 units (and 192's band softcap kernel) where the kv_cols split
# stores P and issues the dV GEMM before the dS pass (bwd/mainloop.h kDvBeforeDs), FA3's 192
# non-det beside (.ab/fa3_192). Tests on dv first: the 192 / 192x128 cases of the deadlock and
# head-dim files (restricted build: other head dims' cases fail as "this build has no ... kernel").
export PYTHONPATH=$PWD/.ab/fa3_192
LIBS=".ab/libs/final2.so.gz .ab/libs/dv.so.gz" SASS=0 ROUNDS=2 TESTS_TIMEOUT=150 \
TESTS='tests/test_deadlock.py tests/test_head_dims.py -k "192"' \
BENCH='bench/bench_bwd.py --hdim 192 --seqlen 2048 4096 16384 --mask full causal --impl dash_det dash fa3 --warm-s 1 --min-s 0.5 ;; bench/bench_bwd.py --hdim 192x128 --seqlen 2048 4096 16384 --mask full causal --impl dash_det dash --warm-s 1 --min-s 0.5 ;; bench/bench_bwd.py --hdim 192 --seqlen 4096 16384 --mask causal --softcap 30 --impl dash_det --warm-s 1 --min-s 0.5' \
bash bench/ab_job.sh
