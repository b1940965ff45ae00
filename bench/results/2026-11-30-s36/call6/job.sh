#!/bin/bash
# (Ran as one of three copies of the analysis script, merged since into fwd_tile_phases.py: same output.)
# Session 36, call 6: a tile's phases on exp/fwd-q2 (q2tr: two Q buffers, TMA-store epilogue, stamped), by
# the tile's KV tiles. Call 5 found q2 +2.1-2.4% at full 1k-2k and nothing on causal: what do causal tiles
# wait on once neither Q nor the epilogue's stores can hold them?
# Prediction: q wait ~0 at every tile length (Q issued thousands of cycles ahead); the short causal tiles'
# first S longer than the long ones' (their K arrives late: the pipeline holds two stages).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
gunzip -c .ab/libs/q2tr.so.gz > dash/_C.abi3.so
PYTHONPATH=$PWD timeout 200 python3 bench/results/2026-11-30-s36/fwd_tile_phases.py --epilogue tma --details 2048 4096 > $OUT/phases_q2.txt 2>&1
echo "rc=$?"; cat $OUT/phases_q2.txt
