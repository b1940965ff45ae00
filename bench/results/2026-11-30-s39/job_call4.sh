#!/bin/bash
# Session 39, call 4: `mcf`, the K / V multicast as landed in the structure (a second full-mask kernel,
# FwdConfig's kKvMulticast flag, trait "fwd_kv_multicast_min_seqlen_k" = 1 for this measurement, the
# plain kernels' SASS identical to main's; the multicast kernel always clustered, release without a
# branch). Carry .ab/libs/land.so.gz .ab/libs/mcf.so.gz .ab/fa3cz .ab/exp.
# (1) hdim 128 forward tests incl. the new kernel-choice / bitwise-vs-plain tests (bf16, fp16).
# (2) A/B against main (land): full 1k-16k, Llama-3-8B full 2k / 4k / 16k (clusters at every length here).
# (3) Beside FA3 with clusters, both orders.
# Prediction (kvbf, call 3): 4k-16k +0.4..+1.3%, 1k about -5%, from which min_seqlen_k is set.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
cp .ab/exp/*.py tests/  # the exp tree's test files (test_fwd, gpu_helpers, test_softcap)
gunzip -c .ab/libs/mcf.so.gz > dash/_C.abi3.so
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/test_fwd.py tests/test_softcap.py -k "128 or kv_multicast or packed_calls" > $OUT/tests_mcf.txt 2>&1
echo "tests rc=$? at $(t): $(tail -1 $OUT/tests_mcf.txt)"; grep -E "^FAILED" $OUT/tests_mcf.txt | head -8
grep -E "^E  " $OUT/tests_mcf.txt | grep -vc restricted
LIBS='.ab/libs/land.so.gz .ab/libs/mcf.so.gz' ROUNDS=2 SASS=0 \
  BENCH='bench/bench_fwd.py --hdims 128 --seqlens 1024 2048 4096 8192 16384 --masks full --impls dash --warm-s 1 --min-s 0.5;;bench/bench_fwd.py --hdims 128 --hidden 4096 --heads-kv 8 --seqlens 2048 4096 16384 --masks full --impls dash --warm-s 1 --min-s 0.5' \
  OUT=$OUT/ab timeout 330 bash bench/ab_job.sh > $OUT/ab_stdout.txt 2>&1
echo "ab rc=$? at $(t)"; tail -11 $OUT/ab_stdout.txt
rm -rf .ab/fa3c && cp -r .ab/fa3cz .ab/fa3c && gunzip .ab/fa3c/flash_attn_3/_C.abi3.so.gz
gunzip -c .ab/libs/mcf.so.gz > dash/_C.abi3.so
for order in "dash fa3" "fa3 dash"; do
  tag=$(echo $order | tr ' ' _)
  PYTHONPATH=$PWD/.ab/fa3c timeout 60 python3 bench/bench_fwd.py --warm-s 1 --min-s 0.5 --hdims 128 --seqlens 2048 8192 16384 \
    --masks full --impls $order > $OUT/fa3_$tag.txt 2>&1
  PYTHONPATH=$PWD/.ab/fa3c timeout 60 python3 bench/bench_fwd.py --warm-s 1 --min-s 0.5 --hdims 128 --hidden 4096 --heads-kv 8 --seqlens 4096 16384 \
    --masks full --impls $order > $OUT/fa3_llama_$tag.txt 2>&1
  echo "fa3 $tag rc=$? at $(t)"; grep -hE "^\| 128" $OUT/fa3_$tag.txt $OUT/fa3_llama_$tag.txt
done
