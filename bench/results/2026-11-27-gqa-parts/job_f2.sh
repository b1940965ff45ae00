#!/bin/bash
# The fold library (job_f1.sh): where a GQA call's time goes now (kernels, events, host), both
# libraries; GPU tests of split groups (hdim 64 / 128 bf16 units only); Llama-3-8B's GQA shape
# with the groups split in 1 / 2 / 4 parts (DASH_KV_PARTS).
START=$(date +%s)
export PYTHONUNBUFFERED=1
t() { echo "t=$(( $(date +%s)-START ))s"; }
for side in final3 fold; do
  gunzip -c .ab/libs/$side.so.gz > dash/_C.abi3.so
  timeout 100 python3 bench/kernel_breakdown.py --calls 30 --hdim 128 --hidden 4096 --heads-kv 8 --seqlen 4096 16384 --mask causal --impl dash_det dash > $OUT/k_$side.txt 2>&1; echo "k $side rc=$? $(t)"
done
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/test_gqa.py tests/test_invariance.py tests/test_varlen.py -k "not float16 and not fp16" > $OUT/tests_fold.txt 2>&1; echo "tests rc=$? $(tail -1 $OUT/tests_fold.txt) $(t)"
W="--warm-s 1 --min-s 0.5"
for parts in 1 2 4; do
  DASH_KV_PARTS=$parts timeout 60 python3 bench/bench_bwd.py --hdim 128 --hidden 4096 --heads-kv 8 --seqlen 4096 16384 --mask causal full --impl dash_det dash $W > $OUT/parts_$parts.txt 2>&1; echo "parts $parts rc=$? $(t)"
done
grep -v "plan\|Warn\|warn" $OUT/k_*.txt
grep -E "passed|failed" $OUT/tests_fold.txt | tail -3
grep -E "^ +[0-9]+ +[0-9]+ " $OUT/parts_*.txt
echo "done $(t)"
