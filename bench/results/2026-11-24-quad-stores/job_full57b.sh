#!/bin/bash
mkdir -p $OUT; ls -la dash/_C.abi3.so > $OUT/tests.txt
T0=$(date +%s)
timeout 240 python3 -m pytest -q -p no:cacheprovider tests --deselect tests/test_schedule_model.py --ignore=tests/test_head_dims.py -rs > $OUT/suite.log 2>&1; echo "suite rc $? $(( $(date +%s) - T0 ))s" >> $OUT/tests.txt; tail -3 $OUT/suite.log >> $OUT/tests.txt
timeout 150 python3 bench/bench_bwd.py --hdim 192 256 --seqlen 2048 4096 8192 16384 --mask full causal --impl dash_det dash cudnn --warm-s 1 --min-s 0.5 --out /tmp/bc > $OUT/bench_192_256_cudnn.log 2>&1
