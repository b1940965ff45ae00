#!/bin/bash
# Deterministic full masks (ascending, dealt from a counter in chunks of walks): the chunk's width
# swept with DASH_DEAL_CHUNK (default = deal_chunk_for: <= 8 MB of Q / dO, ~128 items), GQA shapes
# whose default is 1-2 walks: 192 and 192 x 128 (16 / 4, hidden 3072), hdim 128 (32 / 8, Llama),
# 2k and 4k. The model (schedule_sim, counter-dealt, handoff 0.5-2) predicts +1.5-6.5% from 4 walks.
# f155 library, H200.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
gunzip -c .ab/libs/f155.so.gz > dash/_C.abi3.so
W="--warm-s 1 --min-s 0.5 --seqlen 2048 4096 --mask full --out /tmp/b"
run() {  # tag chunk impls shape...
  local tag=$1 chunk=$2 impls=$3; shift 3
  if [ "$chunk" = def ]; then unset DASH_DEAL_CHUNK; else export DASH_DEAL_CHUNK=$chunk; fi
  timeout 40 python3 bench/bench_bwd.py $W --impl $impls "$@" > $OUT/${tag}_c${chunk}_r$R.txt 2>&1
  echo "== $tag chunk $chunk r$R $(t)"; grep -E "^ *[0-9x]+ +[0-9]+ " $OUT/${tag}_c${chunk}_r$R.txt
  unset DASH_DEAL_CHUNK
}
for R in 1 2; do
  for c in def 2 4 8; do
    if [ $R = 2 ] && [ $c != def ] && [ $c != 4 ]; then continue; fi
    imp=dash_det; [ $c = def ] && imp="dash_det dash"
    run g192 $c "$imp" --hdim 192 --hidden 3072 --heads-kv 4
    run g192x128 $c "$imp" --hdim 192x128 --hidden 3072 --heads-kv 4
    run llama $c "$imp" --hdim 128 --hidden 4096 --heads-kv 8
  done
done
echo "all done $(t)"
