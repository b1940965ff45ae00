#!/bin/bash
# Session 39, call 1 (session 38's prepared job_kvmc.sh, FA3 step only where .ab/fa3cz was carried): `kvmc`
# hdim 128 bf16 forward units only, .ab/libs/kvmc.so.gz, not committed): hdim 128's full-mask forward with
# K / V multicast to 2-CTA clusters (RESULTS items 283-284; producer 40 / MMA 232 registers in that kernel,
# check_sass ok: ../kvmc_check_sass.txt). Carry .ab/libs/land.so.gz .ab/libs/kvmc.so.gz .ab/fa3cz.
# (1) Its GPU tests at hdim 128 bf16 (odd Q-tile counts and packed calls take the unclustered fallback,
#     which loads both halves itself; failures asking for other units are "restricted").
# (2) A/B against `land`, two rounds: hdim 128 full 1k-16k, Llama-3-8B full, causal 2k / 16k as controls.
# (3) Beside FA3 with clusters (.ab/fa3c), both orders, hdim 128 full.
# Prediction: full 8k / 16k +1.5-3% (FA3's clusters gave +2.1 / +2.7%), Llama full 16k +2-3%; 1k-2k within
# +-1% (few KV tiles a tile); causal unchanged (its kernel's code is main's); dash / FA3 full 16k >= 1.01.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/kvmc.so.gz > dash/_C.abi3.so
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/test_fwd.py tests/test_varlen.py tests/test_determinism.py \
  tests/test_invariance.py tests/test_deadlock.py -k "128 and not float16 and not fp16" > $OUT/tests_kvmc.txt 2>&1
echo "tests rc=$? at $(t): $(tail -1 $OUT/tests_kvmc.txt)"
grep -E "^FAILED" $OUT/tests_kvmc.txt | grep -v -c restricted
LIBS='.ab/libs/land.so.gz .ab/libs/kvmc.so.gz' ROUNDS=2 SASS=0 \
  BENCH='bench/bench_fwd.py --hdims 128 --seqlens 1024 2048 4096 8192 16384 --masks full --impls dash --warm-s 1 --min-s 0.5;;bench/bench_fwd.py --hdims 128 --hidden 4096 --heads-kv 8 --seqlens 2048 4096 16384 --masks full --impls dash --warm-s 1 --min-s 0.5;;bench/bench_fwd.py --hdims 128 --seqlens 2048 16384 --masks causal --impls dash --warm-s 1 --min-s 0.5' \
  OUT=$OUT/ab timeout 260 bash bench/ab_job.sh > $OUT/ab_stdout.txt 2>&1
echo "ab rc=$? at $(t)"; tail -14 $OUT/ab_stdout.txt
[ -d .ab/fa3cz ] || exit 0
rm -rf .ab/fa3c && cp -r .ab/fa3cz .ab/fa3c && gunzip .ab/fa3c/flash_attn_3/_C.abi3.so.gz
gunzip -c .ab/libs/kvmc.so.gz > dash/_C.abi3.so
for order in "dash fa3" "fa3 dash"; do
  tag=$(echo $order | tr ' ' _)
  PYTHONPATH=$PWD/.ab/fa3c timeout 50 python3 bench/bench_fwd.py --warm-s 1 --min-s 0.5 --hdims 128 --seqlens 2048 8192 16384 \
    --masks full --impls $order > $OUT/fa3_$tag.txt 2>&1
  echo "fa3 $tag rc=$? at $(t)"; grep -E "^\| 128" $OUT/fa3_$tag.txt
done
