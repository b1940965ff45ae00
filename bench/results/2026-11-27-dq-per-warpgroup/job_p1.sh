#!/bin/bash
# Prepared in the thirteenth session, run in the fourteenth (bench/RESULTS.md item 136: 3.3-4.8% slower, not adopted): item 127's lead, "bwd_dq_wait:
# per_warpgroup" at hdim 64 (dq_per_warpgroup.patch): each MMA warpgroup's dQ GEMM covers the
# whole 128 x 64 dQ tile over its own 64 keys, with no wait for the other warpgroup's dS;
# warpgroup 0 stages its partial, warpgroup 1 adds its own into it (fixed order), the dQ writer
# takes the sum as before. Compiled on the CI machine: MMA loops spill-free (full 981, band 1147
# instructions against 884 / 1050), producer spills as HEAD's; at hdim 128 the 64-register
# fragment spilled the MMA loop and serialized its WGMMAs, so 128 keeps by_keys.
# Against HEAD, both built on the GPU machine. Carry .site.
PATCH=bench/results/2026-11-27-dq-per-warpgroup/dq_per_warpgroup.patch UNITS='fwd_hdim64_bf16_*,bwd_hdim64_bf16_full,bwd_hdim64_bf16_band,bwd_hdim64_bf16_band_softcap' ROUNDS=2 \
BENCH='bench/bench_bwd.py --hdim 64 --seqlen 2048 4096 8192 16384 --mask full causal --impl dash_det dash --warm-s 1 --min-s 0.5 ;; bench/bench_bwd.py --hdim 64 --seqlen 4096 16384 --mask causal --softcap 30 --impl dash_det --warm-s 1 --min-s 0.5' \
TESTS='tests/test_bwd_correctness.py tests/test_determinism.py tests/test_invariance.py tests/test_deadlock.py tests/test_softcap.py tests/test_window.py -k "64 and not float16 and not fp16"' \
bash bench/ab_job.sh
