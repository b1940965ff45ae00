#!/bin/bash
# Prepared for the next session's third call (not run): hdim 96's softcap calls on the fixed-offset
# kernel, with 0 / 1 / 2 of every 4 of its exponentials on the FMA pipe (libraries fo96k0 / fo96k1 /
# fo96k2: hdim 96 bf16 forward units only, built here from main + fwd_fixed_offset_64_96_exp2_on_fma.patch
# with -DDASH_EXP2_ON_FMA=0 / 1 / 2). Carry .ab/libs/main.so.gz and .ab/libs/fo96k{0,1,2}.so.gz.
# Why: item 207 found the fixed offset alone worth ~+1% at 96, as the MUFU model says it should be:
# at hdim 96 (128 x 128 tile, 8 MMA warps) a capped score's tanh and ex2 take 2048 clocks a tile
# against the GEMMs' 1536, so only fewer MUFU ops can help. The walks (full, unmasked step): k0 498
# instructions, 128 MUFU (MUFU 2048 clocks, issue 996); k1 627, 112 (1792, 1254); k2 755, 96 (1536,
# 1510: both at the GEMMs' time). Plain kernels: main's SASS. No spills, no serialized WGMMAs.
# Prediction: a correctness sanity (test_softcap's cap-end rows at 96, bf16, on each variant) passes;
# softcap 30 at 4k / 16k: k0 +0-2% over main, k1 +3-8%, k2 +6-14% (softcap's 17% cost at 96 would drop to
# ~5-10%); plain within noise.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
for k in 0 1 2; do
  gunzip -c .ab/libs/fo96k$k.so.gz > dash/_C.abi3.so
  timeout 60 python3 -m pytest -q -p no:cacheprovider tests/test_softcap.py -k "either_end and 96" > $OUT/sanity_k$k.txt 2>&1
  echo "k$k sanity rc=$?: $(tail -1 $OUT/sanity_k$k.txt)"
done
W="--warm-s 1 --min-s 0.5 --impls dash"
B="bench/bench_fwd.py --hdims 96 --seqlens 4096 16384 --masks causal full --softcap 30 $W"
B="$B;;bench/bench_fwd.py --hdims 96 --seqlens 4096 --masks causal full $W"
LIBS='.ab/libs/main.so.gz .ab/libs/fo96k0.so.gz .ab/libs/fo96k1.so.gz .ab/libs/fo96k2.so.gz' BENCH="$B" ROUNDS=2 SASS=0 \
  OUT=$OUT/ab bash bench/ab_job.sh 2>&1 | tail -10
echo "all done at $(t)"
