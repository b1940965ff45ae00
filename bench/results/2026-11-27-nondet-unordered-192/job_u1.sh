#!/bin/bash
# Item 139: deterministic=False at 192 and 192 / 128 adds dQ unordered (trait bwd_nondet_order).
# Sides: head (HEAD's final library: non-det there runs the ordered kernel) and nd (this commit's
# 192 / 192x128 bf16 units, built on the CI machine). Carry .site and .ab/libs. Tests run on nd.
LIBS='.ab/libs/head.so.gz .ab/libs/nd.so.gz' ROUNDS=2 SASS=0 \
BENCH='bench/bench_bwd.py --hdim 192 192x128 --seqlen 4096 16384 --mask full causal --impl dash_det dash --warm-s 1 --min-s 0.5' \
TESTS='tests/test_deadlock.py tests/test_head_dims.py tests/test_flash_attn_interface_gpu.py -k "(single_writer or hd192 or 192-) and not fp16 and not float16 and not FP16 and not 256"' TESTS_TIMEOUT=200 \
bash bench/ab_job.sh
