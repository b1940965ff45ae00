#!/bin/bash
# Prepared for the next session (not run): where hdim 128's causal forward tile spends the ~0.9 us a tile
# that item 256's fit puts above FlashAttention-3's. Carry .ab/libs/ftrace.so.gz (branch
# exp/fwd-tile-phases: clock64 stamps a tile, hdim 128 bf16 forward units only; built on ecf269b's
# kernels). One call, about 60 s.
# Prediction: the finalize + epilogue and the wait for Q / the first S GEMM hold most of the per-tile
# cost (each a few hundred to ~1000 cycles); the walk's cycles a step at 2k equal 16k's.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
gunzip -c .ab/libs/ftrace.so.gz > dash/_C.abi3.so
PYTHONPATH=$PWD timeout 200 python3 bench/results/2026-11-30-s35/next/fwd_phases.py 2048 4096 16384 > $OUT/phases.txt 2>&1
echo "rc=$?"; cat $OUT/phases.txt | tail -40
