#!/bin/bash
# test_head_dims' new split test after its fix (2200 tokens: hdim 96's 2000-token items did not fill
# the grid), on the CI library of 11f2f9e; then whether the order of implementations in one
# process moves their numbers: 192 full (groups of 4), non-det and det, both orders, twice.
START=$(date +%s)
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/f155.so.gz > dash/_C.abi3.so
python3 -m pytest -q -p no:cacheprovider tests/test_head_dims.py -k groups_split > $OUT/test_split.txt 2>&1
echo "tests rc=$? at $(( $(date +%s) - START ))s: $(tail -1 $OUT/test_split.txt)"
W="--warm-s 1 --min-s 0.5 --out /tmp/bo"
for r in 1 2; do
  for order in "dash dash_det" "dash_det dash"; do
    timeout 40 python3 bench/bench_bwd.py $W --hdim 192 --hidden 3072 --heads-kv 4 --seqlen 2048 4096 --mask full --impl $order > $OUT/order_r${r}_${order// /_}.txt 2>&1
    echo "== r$r $order"; grep -E "^ *[0-9x]+ +[0-9]+ |impl|dash" $OUT/order_r${r}_${order// /_}.txt | grep -v wrote | tail -4
  done
done
echo "all done at $(( $(date +%s) - START ))s"
