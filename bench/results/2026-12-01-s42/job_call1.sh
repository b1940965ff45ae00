#!/bin/bash
# Session 42, call 1: (1) the tests session 41 added for 256's softcap kernels (test_determinism, test_softcap) and
# the three GPU test files session 41's call ran out of time for, on `land41` (the landed library, every unit);
# (2) where the deterministic tax sits at 192 and at hdim 128's long causal calls: each schedule against
# non-det, one process per head dim.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/land41.so.gz > dash/_C.abi3.so
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
FILES="test_determinism test_softcap test_transformers_integration test_long_sequences test_distributed_gpu" \
  SASS=0 STRESS_MAX_S=0 DEADLINE=${DEADLINE:-240} OUT=$OUT/t bash tools/gpu_test_job.sh
echo "tests done at $(t)"
python3 bench/bench_bwd.py --hdim 192 --seqlen 4096 16384 --mask full --impl dash dash_det dash_det:shift dash_det:descending dash_det:diagonal --warm-s 1 --min-s 0.5 --out $OUT/b192f > $OUT/b192f.txt 2>&1
echo "192 full at $(t)"
python3 bench/bench_bwd.py --hdim 192 --seqlen 4096 16384 --mask causal --impl dash dash_det dash_det:descending dash_det:ascending --warm-s 1 --min-s 0.5 --out $OUT/b192c > $OUT/b192c.txt 2>&1
echo "192 causal at $(t)"
python3 bench/bench_bwd.py --hdim 128 --seqlen 8192 16384 --mask causal --impl dash dash_det dash_det:symmetric_shift dash_det:descending dash_det:ascending --warm-s 1 --min-s 0.5 --out $OUT/b128c > $OUT/b128c.txt 2>&1
echo "128 causal at $(t)"
grep -h "^|" $OUT/b192f.txt $OUT/b192c.txt $OUT/b128c.txt | head -80
