"""Experiment (items 247-248): runs bench/bench_bwd.py with DASH_EXP_ROW_CUT (library cut1: the
smallest Q-tile count whose deterministic causal walks are cut at M / 2) and DASH_EXP_BAND_ROWS
(library cut2: Q tiles a band, walks cut at every multiple) set to the first argument (0: none; a
library without the experiment ignores both). Run from the repository root:
  python3 bench/results/2026-11-30-s34/cut_bench.py 128 --hdim 128 --seqlen 16384 --mask causal --impl dash_det"""
import os
import runpy
import sys

os.environ["DASH_EXP_ROW_CUT"] = os.environ["DASH_EXP_BAND_ROWS"] = sys.argv[1]
sys.argv = ["bench/bench_bwd.py"] + sys.argv[2:]
print(f"cut / band rows: {os.environ['DASH_EXP_BAND_ROWS']}", flush=True)
runpy.run_path("bench/bench_bwd.py", run_name="__main__")
