#!/bin/bash
# job_f3 found the first implementation of a process 2.5-4% faster than the second with
# `--warm-s 1 --min-s 0.5` (192 full, groups of 4, H100). The same with the bench's defaults
# (`--warm-s 2 --min-s 1`): does the order effect go away?
START=$(date +%s)
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/f155.so.gz > dash/_C.abi3.so
W=${W:-"--warm-s 2 --min-s 1"}" --out /tmp/bo"; TAG=${TAG:-w2}
for r in 1 2; do
  for order in "dash dash_det" "dash_det dash"; do
    timeout ${LIMIT_S:-60} python3 bench/bench_bwd.py $W --hdim 192 --hidden 3072 --heads-kv 4 --seqlen 2048 4096 --mask full --impl $order > $OUT/${TAG}_r${r}_${order// /_}.txt 2>&1
    echo "== r$r $order"; grep -E "^ *[0-9x]+ +[0-9]+ |^hdim" $OUT/${TAG}_r${r}_${order// /_}.txt
  done
done
echo "all done at $(( $(date +%s) - START ))s"
