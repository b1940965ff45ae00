#!/bin/bash
# Call 5 (session 35): the landed library (fdfull = ecf269b's kernels, every unit) beside FlashAttention-3
# 0251105a (.ab/fa3v) on Llama-3-8B's GQA forward (hidden 4096, 8 K/V heads) and the packed-document mixes'
# forward (MHA and GQA 32 / 8), dash first then FA3 first; then the GPU test files call 4 did not run.
# Carry .ab/libs/fdfull.so.gz and .ab/fa3v.
# Prediction: Llama causal 16k 0.98 -> ~1.0x FA3 (the late draw's +1-2% on banded calls), 2k / 4k
# within ~1% of item 206's 1.006 / 1.038; packed mixes +1-2% on item 206's 1.024 / 0.984 (MHA long / short).
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/fdfull.so.gz > dash/_C.abi3.so
W='--warm-s 1 --min-s 0.5'
for order in "dash fa3" "fa3 dash"; do
  tag=$(echo $order | tr ' ' _)
  PYTHONPATH=$PWD/.ab/fa3v timeout 90 python3 bench/bench_fwd.py $W --hdims 128 --hidden 4096 --heads-kv 8 \
    --seqlens 2048 4096 16384 --masks causal full --impls $order > $OUT/llama_$tag.txt 2>&1
  echo "llama $tag rc=$? at $(t)"; grep -E "^\| 128" $OUT/llama_$tag.txt
  PYTHONPATH=$PWD/.ab/fa3v timeout 60 python3 bench/bench_varlen.py --pass fwd --impl $order $W --out $OUT/v_$tag > $OUT/varlen_$tag.txt 2>&1
  PYTHONPATH=$PWD/.ab/fa3v timeout 60 python3 bench/bench_varlen.py --pass fwd --heads 32 --heads-kv 8 --impl $order $W --out $OUT/vg_$tag > $OUT/varlen_gqa_$tag.txt 2>&1
  echo "varlen $tag at $(t)"; grep -h -E "^ +(long|short)" $OUT/varlen_$tag.txt $OUT/varlen_gqa_$tag.txt
done
rm -rf $OUT/v_* $OUT/vg_*
FILES="test_determinism test_deadlock test_bwd_correctness test_gemma2_gpu test_torch_attention_integration test_transformers_integration test_distributed_gpu" \
  SASS=0 STRESS_MAX_S=20 DEADLINE=$(( 540 - $(date +%s) + START )) OUT=$OUT/tests bash tools/gpu_test_job.sh
(cd $OUT && tar czf bench_logs.tgz ./*.txt && rm -f ./*.txt)
