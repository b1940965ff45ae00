#!/bin/bash
# Session 28's calls 4-7 (run inline; recorded here). Carry .ab/libs/main.so.gz and .ab/libs/ft4.so.gz.
# 4 (b_tests2/): the backward-facing GPU tests on ft4 (its backward kernels' SASS summary is main's).
# 7 (b_tests3/): FILES="test_transformers_integration test_distributed_gpu" SASS=0 DEADLINE=165 STRESS_MAX_S=0 (the same ft4).
gunzip -c .ab/libs/ft4.so.gz > dash/_C.abi3.so && FILES="test_determinism test_bwd_correctness test_deadlock test_torch_attention_integration" SASS=0 DEADLINE=230 STRESS_MAX_S=0 OUT=$OUT/tests bash tools/gpu_test_job.sh
W="--warm-s 1 --min-s 0.5 --impls dash"
# 5 (b16k_softcap/), 6 (b16k_plain/): 16k, softcap 30 and plain.
B="bench/bench_fwd.py --hdims 192 192x128 256 --seqlens 16384 --masks causal full --softcap 30 $W"; LIBS='.ab/libs/main.so.gz .ab/libs/ft4.so.gz' BENCH="$B" ROUNDS=2 SASS=0 OUT=$OUT/ab bash bench/ab_job.sh
B="bench/bench_fwd.py --hdims 192 192x128 256 --seqlens 16384 --masks causal full $W"; LIBS='.ab/libs/main.so.gz .ab/libs/ft4.so.gz' BENCH="$B" ROUNDS=2 SASS=0 OUT=$OUT/ab bash bench/ab_job.sh
