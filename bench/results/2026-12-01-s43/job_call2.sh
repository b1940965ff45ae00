#!/bin/bash
# Session 43, call 2: the deterministic causal backward in `ascending` order (each dQ tile adds its KV tiles
# longest task first; grid-invariant) dealt from a counter in chunks of c walks (DASH_DEAL_CHUNK: consecutive
# tasks of one walk are c draws apart, so they need not wait on each other's adds), against det `auto`
# (diagonal), on land41; hdim 128 and 64 causal 4k-16k; one process per configuration, two rounds.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/land41.so.gz > dash/_C.abi3.so
python3 - > $OUT/plans.txt 2>&1 <<'PY'
import os, subprocess, sys
for c in ["", "2", "4", "8", "16"]:
    code = ("import torch, dash\n"
            "for hd, s in ((128, 4096), (128, 8192), (128, 16384), (64, 16384)):\n"
            "    q = torch.empty(16384 // s, s, 2048 // hd, hd, dtype=torch.bfloat16, device='cuda')\n"
            "    pl = dash.attn_bwd_plan(q, q, True, True, 'ascending')\n"
            "    print(repr(os.environ.get('DASH_DEAL_CHUNK')), hd, s, {k: pl[k] for k in pl if k in ('schedule', 'deal_chunk', 'kv_parts', 'grid', 'counter_dealt')})\n")
    env = dict(os.environ); env.pop("DASH_DEAL_CHUNK", None)
    if c: env["DASH_DEAL_CHUNK"] = c
    subprocess.run([sys.executable, "-c", "import os\n" + code], env=env)
PY
cat $OUT/plans.txt
B="bench/bench_bwd.py --hdim 128 64 --seqlen 4096 8192 16384 --mask causal --warm-s 1 --min-s 0.5"
for round in 1 2; do
  python3 $B --impl dash_det dash > $OUT/r${round}_auto.txt 2>&1; echo "auto r$round at $(t)"; grep -E "^ *(128|64) " $OUT/r${round}_auto.txt
  for c in 4 8 16; do
    DASH_DEAL_CHUNK=$c python3 $B --impl dash_det:ascending > $OUT/r${round}_asc$c.txt 2>&1
    echo "asc c=$c r$round at $(t)"; grep -E "^ *(128|64) " $OUT/r${round}_asc$c.txt
  done
done
python3 $B --impl dash_det:ascending > $OUT/r1_ascdefault.txt 2>&1; echo "asc default at $(t)"; grep -E "^ *(128|64) " $OUT/r1_ascdefault.txt
