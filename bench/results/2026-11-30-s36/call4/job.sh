#!/bin/bash
# (Ran as one of three copies of the analysis script, merged since into fwd_tile_phases.py: same output.)
# Session 36, call 4: the phases of a tile under the TMA-store epilogue (tmatr: exp/fwd-tma-store-trace).
# The A/B of call 3 found no gain from an epilogue ~1,000 cycles shorter: which phase grew instead?
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
gunzip -c .ab/libs/tmatr.so.gz > dash/_C.abi3.so
PYTHONPATH=$PWD timeout 200 python3 bench/results/2026-11-30-s36/fwd_tile_phases.py --epilogue tma 2048 4096 16384 > $OUT/phases_tma.txt 2>&1
echo "rc=$?"; cat $OUT/phases_tma.txt
