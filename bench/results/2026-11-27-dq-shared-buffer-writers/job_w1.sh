#!/bin/bash
# Item 140: at the one-buffer head dims (192, 192 / 128, 256) the deterministic mode's two dQ
# writers take alternate steps of the one staging buffer (one's landing wait overlaps the other's
# next step), plus item 139's unordered non-det at 192 and 192 / 128. Sides: head (HEAD's final
# library, built on the GPU machine) and sw (this tree's 192 / 192x128 / 256 bf16 units, built on
# the CI machine). Carry .site and .ab/libs. Tests run on sw.
LIBS='.ab/libs/head.so.gz .ab/libs/sw.so.gz' ROUNDS=2 SASS=0 \
BENCH='bench/bench_bwd.py --hdim 192 192x128 256 --seqlen 4096 16384 --mask full causal --impl dash_det --warm-s 1 --min-s 0.5 ;; bench/bench_bwd.py --hdim 192 192x128 --seqlen 16384 --mask full causal --impl dash --warm-s 1 --min-s 0.5' \
TESTS='tests/test_deadlock.py tests/test_head_dims.py -k "(single_writer or hd192 or hd256 or 192- or 256-) and not fp16 and not float16 and not FP16"' TESTS_TIMEOUT=240 \
bash bench/ab_job.sh
