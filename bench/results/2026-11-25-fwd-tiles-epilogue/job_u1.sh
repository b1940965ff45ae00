#!/bin/bash
# Forward tiles with CUTLASS's extended WGMMA N sizes (CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED):
# final3 (HEAD) vs vX (128/96: 128x176, 192: 128x112, 256: 128x80) vs vY (128/96: 128x160, 256: 128x72).
LIBS='.ab/libs/final3.so.gz .ab/libs/vY.so.gz .ab/libs/vX.so.gz' ROUNDS=2 \
TESTS='tests/test_fwd.py tests/test_head_dims.py -k "(matches_reference or forward) and not fp16 and not float16 and not cpu"' \
BENCH='bench/bench_fwd.py --hdims 128 --seqlens 2048 4096 8192 16384 --masks full causal --impls dash --warm-s 1 --min-s 0.5 ;; bench/bench_fwd.py --hdims 96 192 256 --seqlens 4096 16384 --masks full causal --impls dash --warm-s 1 --min-s 0.5' \
bash bench/ab_job.sh
