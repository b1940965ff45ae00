#!/bin/bash
# Prepared for the next session (not run): "bwd_dq_wait: by_keys" also at hdim 96 and in the
# softcap kernels of 64 / 96 / 128 (by_keys_96_softcap.patch; compiled on the CI machine: MMA loops
# spill-free, the same ptxas spill bytes as HEAD's), against HEAD, both built on the GPU machine.
# No carry beyond .site: the variant tree is made here from the patch.
mkdir -p .ab/bk96 && cp -r csrc setup.py dash tools bench tests Makefile README.md .ab/bk96/ && \
  patch -p1 -d .ab/bk96 < bench/results/2026-11-27-bwd-split-dq/by_keys_96_softcap.patch
VARIANT=.ab/bk96 UNITS='fwd_hdim64_bf16_*,fwd_hdim96_bf16_*,fwd_hdim128_bf16_*,bwd_hdim96_bf16_full,bwd_hdim96_bf16_band,bwd_hdim64_bf16_band_softcap,bwd_hdim128_bf16_band_softcap' ROUNDS=2 \
BENCH='bench/bench_bwd.py --hdim 96 --seqlen 2048 4096 16384 --mask full causal --impl dash_det dash --warm-s 1 --min-s 0.5 ;; bench/bench_bwd.py --hdim 64 128 --seqlen 4096 16384 --mask causal --softcap 30 --impl dash_det --warm-s 1 --min-s 0.5' \
TESTS='tests/test_bwd_correctness.py tests/test_determinism.py tests/test_softcap.py tests/test_head_dims.py -k "(96 or softcap) and not float16 and not fp16"' \
bash bench/ab_job.sh
