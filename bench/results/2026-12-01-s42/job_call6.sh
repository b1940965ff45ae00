#!/bin/bash
# Session 42, call 6: deterministic full masks dealt in chunks of 4 walks (DASH_DEAL_CHUNK) against the
# plan's own chunk (1 walk at these shapes: deal_chunk_for's 8 MB / 128-item bounds), on `land41`, two rounds
# for the plan and 4, alternating processes: hdim 128 MHA and Llama-3-8B GQA at 8k / 16k, hdim 64 and 256 at 8k / 16k.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/land41.so.gz > dash/_C.abi3.so
B="--mask full --impl dash_det --warm-s 1 --min-s 0.5 --out $OUT/x"
for round in 1 2; do
  if [ $round = 1 ]; then CH="def 4"; else CH="4 def"; fi
  for c in $CH; do
    if [ $c = def ]; then E=""; else E="DASH_DEAL_CHUNK=$c"; fi
    env $E python3 bench/bench_bwd.py --hdim 64 128 256 --seqlen 8192 16384 $B > $OUT/r${round}_c${c}_mha.txt 2>&1
    env $E python3 bench/bench_bwd.py --hdim 128 --heads-kv 8 --hidden 4096 --seqlen 8192 16384 $B > $OUT/r${round}_c${c}_llama.txt 2>&1
    echo "round $round chunk $c at $(t): $(grep -h '^ *[0-9]* *[0-9]* *full' $OUT/r${round}_c${c}_*.txt | tr -s ' ' | tr '\n' ';')"
  done
done
rm -rf $OUT/x
