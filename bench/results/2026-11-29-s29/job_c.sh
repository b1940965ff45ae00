#!/bin/bash
# The fixed-offset walk's row sums by fp32 adds of P as converted for the P V GEMM, in place of the
# row-sum GEMM (fwd_rowsum_adds.patch; library rs: the 8 bf16 fixed-offset softcap units, 64 / 192 /
# 192 x 128 / 256). Carry .ab/libs/b29.so.gz and .ab/libs/rs.so.gz.
# Why (ncu in b/): at 192 the softcap kernel waits 11.5% of its samples on the P V group's completion
# (WARPGROUP.DEPBAR gsb0 0x0; 1.4% in the plain kernel), and the row-sum GEMM adds one 64 x 8 x 16
# HGMMA for each of P V's k-steps (7 at 192, 8 at 192 x 128, 5 at 256, 8 at 64), whose cost on the
# tensor pipe is not their FLOPs. Softcap's cost tracks that count (256 ~4%, 192 ~9%, 192 x 128 ~11.5%).
# The adds cost ~2 instructions a score (unpack and FADD), where the issue slots are 30% busy at 192
# (50% at 64, MUFU-bound there).
# Prediction: sanity tests pass (one-key rows exact, cap-end rows against fp64); softcap 30 at 4k:
# 192 +3-6%, 192 x 128 +4-8%, 256 +1-3%, 64 -3..+2%.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/rs.so.gz > dash/_C.abi3.so
timeout 60 python3 -m pytest -q -p no:cacheprovider tests/test_softcap.py -k "(either_end or one_key) and not 96 and not 128" > $OUT/sanity_rs.txt 2>&1
echo "rs sanity rc=$?: $(tail -1 $OUT/sanity_rs.txt)"
W="--warm-s 1 --min-s 0.5 --impls dash"
B="bench/bench_fwd.py --hdims 192 192x128 256 64 --seqlens 4096 --masks causal full --softcap 30 $W"
LIBS='.ab/libs/b29.so.gz .ab/libs/rs.so.gz' BENCH="$B" ROUNDS=2 SASS=0 OUT=$OUT/ab bash bench/ab_job.sh 2>&1 | tail -10
echo "all done at $(t)"
