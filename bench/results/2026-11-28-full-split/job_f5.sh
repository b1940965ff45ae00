#!/bin/bash
# job_f3 found the first implementation of a process 2.5-4% faster than the second with
# `--warm-s 1 --min-s 0.5` (192 full, groups of 4, H100). job_f3 again with bench_bwd's settle
# run (SETTLE_S: 2 s of the first implementation, untimed, after each problem's setup; item 156):
# job_f4's loop with the short method.
W="--warm-s 1 --min-s 0.5" TAG=settle LIMIT_S=30 bash "$(dirname "$0")/job_f4.sh"
