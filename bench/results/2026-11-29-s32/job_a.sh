#!/bin/bash
# Call 1 (session 32). Carry .ab/libs/f0d.so.gz (CI's build of f0d3ac0: HEAD's kernels, every unit) and
# .ab/libs/s32.so.gz (this session's working tree, every unit: hdim 128's full-mask softcap backward
# compiled once per mask flag from the trait table's new "bwd_softcap_mask").
# (1) Sanity on s32: test_softcap's hdim 128 cases (both dtypes: the fp16 kernel changed too) and
#     test_traits. Prediction: pass.
# (2) A/B f0d against s32, hdim 128 softcap 30, full (changed) and causal (unchanged: the control),
#     det and non-det, 2k / 4k / 16k, two rounds. Prediction (item 234's s128f): full det +1.3..+2.0%,
#     non-det +0.5..+1.0%; causal within +-0.7%.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt 2>&1
gunzip -c .ab/libs/s32.so.gz > dash/_C.abi3.so
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/test_softcap.py -k "128" > $OUT/sanity_softcap.txt 2>&1
echo "softcap 128 rc=$?: $(tail -1 $OUT/sanity_softcap.txt) at $(t)"
timeout 100 python3 -m pytest -q -p no:cacheprovider tests/test_traits.py > $OUT/sanity_traits.txt 2>&1
echo "traits rc=$?: $(tail -1 $OUT/sanity_traits.txt) at $(t)"
B="bench/bench_bwd.py --hdim 128 --seqlen 2048 4096 16384 --mask full causal --impl dash_det dash --softcap 30 --warm-s 1 --min-s 0.5"
LIBS='.ab/libs/f0d.so.gz .ab/libs/s32.so.gz' BENCH="$B" ROUNDS=2 SASS=0 OUT=$OUT/ab bash bench/ab_job.sh 2>&1 | tail -8
echo "all done at $(t)"
