#!/bin/bash
# A/B (bench/ab_job.sh, LIBS mode, two rounds): a = the final library (bd04191's kernels, .ci/run's
# build), b = this tree's bf16 units of hdim 64 / 128 / 192 / 192x128 / 256 (built on the CI machine):
#   - the dO stream of counter-dealt calls starts a task at its record (task_ready), not when
#     K and V have landed (kv_full): every deterministic `auto` call;
#   - fixed-length banded `descending` dealt from a counter (KV tile slowest, longest first)
#     instead of static rounds: the dash_det:descending column;
#   - non-deterministic `auto` on a causal mask where symmetric shift does not apply (192,
#     192x128) runs diagonal, not descending: the dash (non-det) column at 192 / 192x128.
LIBS=".ab/libs/final.so.gz .ab/libs/tr.so.gz" SASS=0 ROUNDS=2 \
BENCH='bench/bench_bwd.py --hdim 64 128 --seqlen 2048 4096 16384 --mask causal --impl dash_det dash_det:descending dash --warm-s 1 --min-s 0.5 ;; bench/bench_bwd.py --hdim 192 192x128 --seqlen 2048 4096 16384 --mask causal --impl dash_det dash_det:descending dash --warm-s 1 --min-s 0.5 ;; bench/bench_bwd.py --hdim 64 128 192 --seqlen 2048 16384 --mask full --impl dash_det --warm-s 1 --min-s 0.5 ;; bench/bench_bwd.py --hdim 256 --seqlen 4096 16384 --mask full causal --impl dash_det --warm-s 1 --min-s 0.5' \
bash bench/ab_job.sh
