#!/bin/bash
# Session 39, call 5: K / V multicast at the other head dims FA3 clusters (its full-mask forward at
# hdim >= 128): mc3 = the exp tree with "fwd_kv_multicast_min_seqlen_k" 1 at 128, 192, 192 / 128 and
# 256 (bf16 full units; each multicast kernel check_sass ok, no spill at 40 / 232 registers); land3 =
# main's same units. A/B two rounds, then beside FA3 (fwd-only peer with 192 / 256, .ab/fa3f), and
# hdim 128 at 32k. Carry .ab/libs/land3.so.gz .ab/libs/mc3.so.gz .ab/fa3fz .ab/exp.
# Prediction: 192 / 256 full +1..+3% at 8k-16k (more bytes a KV tile per FLOP than 128: d + d_v of
# 384-512 against 256), 2k -1..-2% as at 128; 128 at 32k +1..+2%.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
cp .ab/exp/test_*.py .ab/exp/gpu_helpers.py tests/ && cp .ab/exp/_traits_dash.py dash/_traits.py  # the exp tree's tests and trait mirror
gunzip -c .ab/libs/mc3.so.gz > dash/_C.abi3.so
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/test_head_dims.py tests/test_fwd.py -k "forward or (kv_multicast and bf16 and full)" > $OUT/tests_mc3.txt 2>&1
echo "tests rc=$? at $(t): $(tail -1 $OUT/tests_mc3.txt)"; grep -E "^E  " $OUT/tests_mc3.txt | grep -vc restricted
LIBS='.ab/libs/land3.so.gz .ab/libs/mc3.so.gz' ROUNDS=2 SASS=0 \
  BENCH='bench/bench_fwd.py --hdims 192 192x128 256 --seqlens 2048 4096 8192 16384 --masks full --impls dash --warm-s 1 --min-s 0.5;;bench/bench_fwd.py --hdims 128 --seqlens 32768 --masks full --impls dash --warm-s 1 --min-s 0.5' \
  OUT=$OUT/ab timeout 330 bash bench/ab_job.sh > $OUT/ab_stdout.txt 2>&1
echo "ab rc=$? at $(t)"; tail -16 $OUT/ab_stdout.txt
[ -d .ab/fa3fz ] || exit 0
rm -rf .ab/fa3f && cp -r .ab/fa3fz .ab/fa3f && gunzip .ab/fa3f/flash_attn_3/_C.abi3.so.gz
gunzip -c .ab/libs/mc3.so.gz > dash/_C.abi3.so
for order in "dash fa3" "fa3 dash"; do
  tag=$(echo $order | tr ' ' _)
  PYTHONPATH=$PWD/.ab/fa3f timeout 90 python3 bench/bench_fwd.py --warm-s 1 --min-s 0.5 --hdims 192 192x128 256 --seqlens 4096 16384 \
    --masks full --impls $order > $OUT/fa3_$tag.txt 2>&1
  echo "fa3 $tag rc=$? at $(t)"; grep -hE "^\| (192|256)" $OUT/fa3_$tag.txt
done
