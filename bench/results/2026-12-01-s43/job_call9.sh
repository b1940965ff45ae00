#!/bin/bash
# Session 43, call 9: every hdim 256 unit on 64 x 80 tiles (`x80all`: bf16 and fp16, plain and softcap; the softcap
# kernels without their former "bwd_last_gemm": "dq", which the dQ slices replace): hdim 256's GPU tests, then
# softcap 30 det against land41 (one process each; what little device time is left).
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/x80all.so.gz > dash/_C.abi3.so
timeout 70 python3 -m pytest -q tests/test_head_dims.py tests/test_softcap.py tests/test_determinism.py tests/test_deadlock.py \
  -k "256 and not cpu" > $OUT/tests_x80all.txt 2>&1
echo "tests rc=$? at $(t)"; tail -4 $OUT/tests_x80all.txt
B="bench/bench_bwd.py --hdim 256 --seqlen 4096 16384 --mask full causal --impl dash_det --softcap 30 --warm-s 1 --min-s 0.5"
timeout 40 python3 $B > $OUT/softcap_x80all.txt 2>&1; echo "x80all at $(t)"; grep -E "^ *256" $OUT/softcap_x80all.txt
gunzip -c .ab/libs/land41.so.gz > dash/_C.abi3.so
timeout 40 python3 $B > $OUT/softcap_land41.txt 2>&1; echo "land41 at $(t)"; grep -E "^ *256" $OUT/softcap_land41.txt
