#!/bin/bash
# Prepared for the next session's first call (not run): on main at the end of session 26 (the CI
# build of 525be6d, whose kernels are s26's instruction for instruction; carry it as
# .ab/libs/main.so.gz, with FA3 as .ab/fa3v). (1) The GPU files whose helpers 97a13de moved
# (test_fwd, test_window, test_softcap, test_head_dims; CPU collection passed). (2) Issue 15's "the
# same ratios hold for GQA and the packed mixes" on the current kernels, in one job: Llama-3-8B's
# GQA shape (32 / 8 heads of 128) forward and backward beside FA3, and the packed-document mixes
# (MHA and GQA, forward and backward) beside FA3's varlen passes.
# Prediction: tests pass; GQA forward 1.00-1.04x FA3, GQA det backward ~1.06 / ~0.99x FA3 non-det at
# 4k / 16k full, ~1.00 / ~0.99x causal (session 23's 1.059 / 0.994, 1.000 / 0.988); packed mixes det
# backward 1.06-1.37x FA3 non-det, forward 1.00-1.63x (session 24's table).
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/main.so.gz > dash/_C.abi3.so
FILES="test_fwd test_window test_softcap test_head_dims" SASS=0 DEADLINE=150 STRESS_MAX_S=0 OUT=$OUT/tests bash tools/gpu_test_job.sh
echo "tests done at $(t)"
export PYTHONPATH=$PWD/.ab/fa3v
W="--warm-s 1 --min-s 0.5"
timeout 75 python3 bench/bench_fwd.py --hdims 128 --hidden 4096 --heads-kv 8 --seqlens 2048 4096 16384 \
  --masks causal full --impls dash fa3 cudnn $W --out $OUT/g1 > $OUT/fwd_gqa.txt 2>&1; echo "fwd gqa rc=$? at $(t)"
timeout 110 python3 bench/bench_bwd.py --hdim 128 --hidden 4096 --heads-kv 8 --seqlen 4096 16384 --mask full causal \
  --impl dash_det dash fa3_det fa3 $W --out $OUT/g2 > $OUT/bwd_gqa.txt 2>&1; echo "bwd gqa rc=$? at $(t)"
timeout 60 python3 bench/bench_varlen.py --impl dash_det dash fa3_det fa3 $W --out $OUT/v1 > $OUT/varlen_bwd.txt 2>&1
timeout 60 python3 bench/bench_varlen.py --heads 32 --heads-kv 8 --impl dash_det dash fa3_det fa3 $W --out $OUT/v2 > $OUT/varlen_bwd_gqa.txt 2>&1
timeout 40 python3 bench/bench_varlen.py --pass fwd --impl dash fa3 $W --out $OUT/v3 > $OUT/varlen_fwd.txt 2>&1
timeout 40 python3 bench/bench_varlen.py --pass fwd --heads 32 --heads-kv 8 --impl dash fa3 $W --out $OUT/v4 > $OUT/varlen_fwd_gqa.txt 2>&1
echo "varlen done at $(t)"
for f in fwd_gqa bwd_gqa varlen_bwd varlen_bwd_gqa varlen_fwd varlen_fwd_gqa; do echo "== $f"; grep -E "^\||^ +[0-9]|^ *[a-zA-Z].*[0-9]\.[0-9]" $OUT/$f.txt | tail -8; done
(cd $OUT && tar czf peers.tgz g1 g2 v1 v2 v3 v4 2>/dev/null && rm -rf g1 g2 v1 v2 v3 v4)
