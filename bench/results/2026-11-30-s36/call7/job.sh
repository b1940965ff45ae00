#!/bin/bash
# (Ran as one of three copies of the analysis script, merged since into fwd_tile_phases.py: same output.)
# Session 36, call 7: a tile's phases on exp/fwd-q2 (q2tr2: two Q buffers, TMA-store epilogue, stamped,
# the first step split into tile setup, K wait, turn wait, GEMM). Call 6 (job.sh there) found the first S GEMM ~1,300
# cycles on causal tiles against ~950 on full ones, whatever the tile's length: which part?
# Prediction: the tile setup (the mask geometry before the first GEMM: unmasked range, passed steps) holds
# most of the ~350 extra cycles; the K wait and the GEMM the same as on full tiles.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
gunzip -c .ab/libs/q2tr2.so.gz > dash/_C.abi3.so
PYTHONPATH=$PWD timeout 200 python3 bench/results/2026-11-30-s36/fwd_tile_phases.py --epilogue tma --details 2048 4096 > $OUT/phases_q2b.txt 2>&1
echo "rc=$?"; cat $OUT/phases_q2b.txt
