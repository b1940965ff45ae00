#!/bin/bash
# How much det / non-det / FA3 non-det move between rounds of one job (job_f3 and job_n1 gave
# det / non-det ratios 2-6% apart at hdim 128 causal 16k): three rounds on HEAD's library.
# Carry .ab/libs (head.so.gz) and .ab/fa3.
export PYTHONPATH=$PWD/.ab/fa3:${PYTHONPATH:-}
LIBS='.ab/libs/head.so.gz' ROUNDS=3 \
BENCH='bench/bench_bwd.py --hdim 64 128 --seqlen 4096 16384 --mask full causal --impl dash_det dash fa3 --warm-s 1 --min-s 0.5' \
bash bench/ab_job.sh
