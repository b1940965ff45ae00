#!/bin/bash
# Session 22, call 4: the rule after call 3 (s22b: non-det causal `auto` runs ascending only where
# an L2 section of walks holds a grid's worth of items, else symmetric shift / diagonal as before).
# Prediction: Llama 2k / 4k / 8k and MQA 4k / 16k back at twob2's numbers (their old plans), Llama
# 16k and MHA as s22 (+2-5%). One round, then the plan and GQA tests on s22b.
# Carry .ab/libs/{twob2,s22b}.so.gz.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT/ab $OUT/tests
export PYTHONUNBUFFERED=1
W='--warm-s 1 --min-s 0.5'
LIBS='.ab/libs/twob2.so.gz .ab/libs/s22b.so.gz' SASS=0 ROUNDS=1 \
BENCH="bench/bench_bwd.py --hdim 128 --hidden 4096 --heads-kv 8 --seqlen 2048 4096 8192 16384 --mask causal --impl dash $W ;; bench/bench_bwd.py --hdim 128 --heads-kv 1 --seqlen 4096 16384 --mask causal --impl dash $W ;; bench/bench_bwd.py --hdim 128 192 --seqlen 4096 16384 --mask causal --impl dash $W" \
OUT=$OUT/ab bash bench/ab_job.sh
echo "A/B done at $(t)"
gunzip -c .ab/libs/s22b.so.gz > dash/_C.abi3.so
python3 - > $OUT/plans.txt 2>&1 <<'PY'
import torch, dash
for (b, s, h, hkv, d) in ((8, 2048, 32, 8, 128), (4, 4096, 32, 8, 128), (2, 8192, 32, 8, 128), (1, 16384, 32, 8, 128),
                          (4, 4096, 16, 1, 128), (1, 16384, 16, 1, 128), (4, 4096, 16, 16, 128), (1, 16384, 10, 10, 192)):
    q = torch.empty(b, s, h, d, device="cuda", dtype=torch.bfloat16)
    k = torch.empty(b, s, hkv, d, device="cuda", dtype=torch.bfloat16)
    print(b, s, h, hkv, d, dash.attn_bwd_plan(q, k, causal=True, deterministic=False))
PY
cat $OUT/plans.txt | cut -c1-200
FILES="test_determinism test_gqa test_bwd_correctness test_deadlock" SASS=0 STRESS_MAX_S=0 DEADLINE=150 \
  OUT=$OUT/tests bash tools/gpu_test_job.sh
echo "tests done at $(t)"
