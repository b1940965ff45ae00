#!/bin/bash
# README's main table: default steady-state method, the library built by job_full59.sh
mkdir -p $OUT
timeout 250 python3 bench/bench_bwd.py --hdim 128 --seqlen 4096 16384 --mask full causal --impl dash_det dash cudnn sdpa_flash_det dash_det:ascending dash_det:fa3_baseline --out /tmp/br > $OUT/readme_128.log 2>&1
timeout 80 python3 bench/bench_bwd.py --hdim 64 --seqlen 8192 --mask full --impl dash_det dash cudnn sdpa_flash_det dash_det:ascending dash_det:fa3_baseline --out /tmp/br64 > $OUT/readme_64.log 2>&1
