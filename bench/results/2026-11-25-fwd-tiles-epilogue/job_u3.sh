#!/bin/bash
# final3 (HEAD) vs vM (forward tiles 192: 128x112, 256: 128x80 with one WGMMA per GEMM; tree row max)
# vs vE (vM + O staged through smem at hdim 64 / 96 / 128, 16-byte stores); vE's forward tests.
O=$OUT
OUT=$O/a LIBS='.ab/libs/final3.so.gz .ab/libs/vM.so.gz .ab/libs/vE.so.gz' ROUNDS=2 \
TESTS='tests/test_fwd.py tests/test_varlen.py tests/test_head_dims.py tests/test_window.py -k "(fwd or forward or matches_reference) and (bf16 or bfloat16) and not cpu and not backward and not bwd"' \
BENCH='bench/bench_fwd.py --hdims 128 64 96 --seqlens 2048 4096 16384 --masks full causal --impls dash --warm-s 1 --min-s 0.5' \
bash bench/ab_job.sh 2>&1 | grep -v "^== \|;"
OUT=$O/b LIBS='.ab/libs/final3.so.gz .ab/libs/vM.so.gz' ROUNDS=2 \
BENCH='bench/bench_fwd.py --hdims 192 256 --seqlens 4096 16384 --masks full causal --impls dash --warm-s 1 --min-s 0.5' \
bash bench/ab_job.sh 2>&1 | grep -v "^== \|;"
