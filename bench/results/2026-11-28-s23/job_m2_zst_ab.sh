#!/bin/bash
# Prepared (not run): deterministic calls stop zeroing dq_accum. Each dQ tile's rank-0 partial
# is stored (cp.async.bulk) instead of reduce-added, the preprocess skips the zeroing when the
# call is deterministic, and the postprocess writes the tiles without adds as zeros
# (zero_store.patch, on top of early_postprocess.patch applied to main; its library `zst`: hdim 64 / 128 bf16 units, built
# here). Item 148's breakdown: the preprocess takes ~0.07 ms a call at 16k tokens, half of its
# traffic the 134 MB of zeros. Prediction: det +2-3% at 2k, +1.5-2% at 4k, ~+0.5% at 16k
# (hdim 64 / 128, both masks); non-det unchanged. Bits: the same sums (0 + x = x), except an
# element whose every partial is -0.0, now -0.0 where it was +0.0 (torch.equal holds).
# If this checkout lacks .ab/libs/zst.so.gz: a copy of the tree with `patch -p1 < early_postprocess.patch`
# and then `patch -p1 < zero_store.patch`,
# built with DASH_INSTANTIATIONS='bwd_hdim{128,64}_bf16_{full,band},fwd_hdim{128,64}_bf16_{full,band}'
# (8 units, ~4 min here). The baseline is item 180's library (pdl_full, job_next.sh's).
# Carry .ab/libs/{pdl_full,zst}.so.gz.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT/ab $OUT/check $OUT/tests
export PYTHONUNBUFFERED=1
W='--warm-s 1 --min-s 0.5'
LIBS='.ab/libs/pdl_full.so.gz .ab/libs/zst.so.gz' SASS=0 ROUNDS=2 \
BENCH="bench/bench_bwd.py --hdim 128 64 --seqlen 2048 4096 16384 --mask causal full --impl dash_det dash $W" \
OUT=$OUT/ab bash bench/ab_job.sh
echo "A/B done at $(t)"
D=bench/results/2026-11-28-detsplit
for lib in pdl_full zst; do
  gunzip -c .ab/libs/$lib.so.gz > dash/_C.abi3.so
  HDIMS=64,128 timeout 100 python3 $D/bwd_cross_lib.py save /tmp/$lib.pt > $OUT/check/cross_$lib.txt 2>&1
  echo "$lib: $(tail -1 $OUT/check/cross_$lib.txt) at $(t)"
done
python3 $D/bwd_cross_lib.py compare /tmp/pdl_full.pt /tmp/zst.pt 2>&1 | tee $OUT/check/compare.txt | tail -3
(cd $OUT/check && tar czf ../check.tgz ./*.txt) && rm -rf $OUT/check
FILES="test_determinism test_bwd_correctness test_deadlock test_varlen test_window" SASS=0 STRESS_MAX_S=10 \
  DEADLINE=150 OUT=$OUT/tests bash tools/gpu_test_job.sh
echo "tests done at $(t) (cases asking for softcap / 96-256 units fail: the zst library lacks them)"
