#!/bin/bash
# Prepared for the next session (RESULTS item 161's lead; not run yet). Deterministic full masks
# (ascending, counter-dealt) at the GQA shapes whose items do not fill whole rounds: the query-head
# group split (DASH_KV_PARTS) together with wider dealing chunks (DASH_DEAL_CHUNK), which the
# schedule model predicts +9-16% at 192 16 / 4 2k-4k (today: 1 part, 1 walk a chunk; the split alone
# measured nothing, item 155, because a walk's KV tiles dealt one after another wait on each other's
# adds). Both knobs only move work between CTAs and (parts) add dK / dV in part order: the bits stay
# deterministic. Also runs bench_bwd --clocks for the first time on a GPU. cb47de3 library (was f155: same kernels); carry
# .ab/libs/cb47de3.so.gz. About 6 minutes.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
gunzip -c .ab/libs/cb47de3.so.gz > dash/_C.abi3.so
W="--warm-s 1 --min-s 0.5 --seqlen 2048 4096 --mask full --out /tmp/b"
declare -A SHAPE=([g192]="--hdim 192 --hidden 3072 --heads-kv 4" [g192x128]="--hdim 192x128 --hidden 3072 --heads-kv 4"
                  [g256]="--hdim 256 --hidden 4096 --heads-kv 4" [llama]="--hdim 128 --hidden 4096 --heads-kv 8")
for tag in g192 g192x128 g256 llama; do
  for combo in def:def 2:def 2:4 2:8 4:4 4:8; do
    parts=${combo%:*}; chunk=${combo#*:}
    unset DASH_KV_PARTS DASH_DEAL_CHUNK
    [ $parts != def ] && export DASH_KV_PARTS=$parts
    [ $chunk != def ] && export DASH_DEAL_CHUNK=$chunk
    imp=dash_det; [ $combo = def:def ] && imp="dash_det dash"
    clocks=; [ $combo = def:def ] && clocks=--clocks
    timeout 45 python3 bench/bench_bwd.py $W --impl $imp ${SHAPE[$tag]} $clocks > $OUT/${tag}_p${parts}_c${chunk}.txt 2>&1
    echo "== $tag parts $parts chunk $chunk $(t)"; grep -E "^ *[0-9x]+ +[0-9]+ " $OUT/${tag}_p${parts}_c${chunk}.txt
  done
done
unset DASH_KV_PARTS DASH_DEAL_CHUNK
echo "all done $(t)"
(cd $OUT && tar czf n1_logs.tgz ./*.txt && rm -f ./*.txt)
