#!/bin/bash
# (1) bench/wgmma_rate.cu (built on the CI machine into .ab/micro/wgmma_rate): WGMMA rates by
#     shape, SS / RS, one to three warpgroups.
# (2) The backward's exponentials partly on the FMA pipe (bwd_exp2_fma.patch: one in k of each
#     thread's P-pass columns as exp2_fma, the rest MUFU.EX2), k = 8 / 4 / 3 / 2 against HEAD.
#     Libraries of the units fwd_hdim{64,128}_bf16_*, bwd_hdim{64,128}_bf16_{band,full}, built on
#     the CI machine from HEAD's sources (e2base) and the patched trees, carried in .ab/built.
# Carry .ab/built and .ab/micro.
.ab/micro/wgmma_rate > "$OUT/wgmma_rate.txt" 2>&1; cat "$OUT/wgmma_rate.txt"
LIBS='.ab/built/e2base.so.gz .ab/built/e2k8.so.gz .ab/built/e2k4.so.gz .ab/built/e2k3.so.gz .ab/built/e2k2.so.gz' ROUNDS=2 \
BENCH='bench/bench_bwd.py --hdim 64 128 --seqlen 2048 4096 16384 --mask full causal --impl dash_det --warm-s 1 --min-s 0.5' \
TESTS='tests/test_bwd_correctness.py tests/test_determinism.py -k "(64 or 128) and not float16 and not fp16 and not softcap"' \
bash bench/ab_job.sh
