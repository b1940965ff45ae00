#!/bin/bash
# Call 5: does the longest-first tail lose on GQA launches generally (split query-head groups)?
# tail2 against tail2 in item order, hdim 128 det causal: 8 / 2 (Llama-3-8B at tensor-parallel 4),
# 4 / 1 (tensor-parallel 8), 32 / 8 (the whole model), at 8k x 2 and 16k; plans printed first.
set -u
OUT=${OUT:-/tmp/out}
gunzip -c .ab/libs/tail2.so.gz > dash/_C.abi3.so
python3 - > "$OUT/plans.txt" 2>&1 <<'PY'
import torch, dash
for b, h, hkv, s in [(1, 8, 2, 16384), (2, 8, 2, 8192), (1, 4, 1, 16384), (2, 4, 1, 8192), (1, 32, 8, 16384), (2, 32, 8, 8192)]:
    q = torch.empty(b, s, h, 128, device="cuda", dtype=torch.bfloat16); k = torch.empty(b, s, hkv, 128, device="cuda", dtype=torch.bfloat16)
    print(b, h, hkv, s, dash.attn_bwd_plan(q, k, True, True))
PY
cat "$OUT/plans.txt"
cp .ab/libs/tail2.so.gz .ab/libs/tail2order.so.gz
SIDE_ENV_tail2order='DASH_TEST_ITEM_ORDER_TAIL=1' LIBS='.ab/libs/tail2.so.gz .ab/libs/tail2order.so.gz' SASS=0 \
ROUNDS=2 OUT=$OUT/ab \
BENCH='bench/bench_bwd.py --hdim 128 --seqlen 8192 16384 --hidden 1024 --heads-kv 2 --mask causal --impl dash_det --warm-s 1 --min-s 0.5 ;; bench/bench_bwd.py --hdim 128 --seqlen 8192 16384 --hidden 512 --heads-kv 1 --mask causal --impl dash_det --warm-s 1 --min-s 0.5 ;; bench/bench_bwd.py --hdim 128 --seqlen 8192 16384 --hidden 4096 --heads-kv 8 --total-tokens 16384 --mask causal --impl dash_det --warm-s 1 --min-s 0.5' \
  bash bench/ab_job.sh
