#!/bin/bash
# Where the backward's time goes kernel by kernel (bench/kernel_breakdown.py) on the last
# library (final3 = .ci/run's build of 12729d9) beside FA3 (.ab/fa3): Llama-3-8B's GQA shape and
# MHA hdim 64 / 128; then det GQA with the query-head groups split in 1 / 2 / 4 parts (DASH_KV_PARTS).
START=$(date +%s)
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/.ab/fa3
t() { echo "t=$(( $(date +%s)-START ))s"; }
gunzip -c .ab/libs/final3.so.gz > dash/_C.abi3.so
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv
K="python3 bench/kernel_breakdown.py --calls 20"
timeout 200 $K --hdim 128 --hidden 4096 --heads-kv 8 --seqlen 4096 16384 --mask causal full --impl dash_det dash fa3_det fa3 > $OUT/k_gqa.txt 2>&1; echo "gqa rc=$? $(t)"
timeout 150 $K --hdim 64 128 --seqlen 4096 16384 --mask causal --impl dash_det dash fa3_det fa3 > $OUT/k_mha.txt 2>&1; echo "mha rc=$? $(t)"
B="--warm-s 1 --min-s 0.5"
for parts in 1 2 4; do
  DASH_KV_PARTS=$parts timeout 60 python3 bench/bench_bwd.py --hdim 128 --hidden 4096 --heads-kv 8 --seqlen 4096 16384 --mask causal full --impl dash_det dash $B > $OUT/parts_$parts.txt 2>&1; echo "parts $parts rc=$? $(t)"
done
cat $OUT/k_gqa.txt $OUT/k_mha.txt | grep -v "^plan\|^ *plan" 
grep -E "^ +[0-9]+ +[0-9]+ " $OUT/parts_*.txt
echo "done $(t)"
