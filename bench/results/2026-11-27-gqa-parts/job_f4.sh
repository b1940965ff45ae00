#!/bin/bash
# fold2 (job_f3.sh): where a call's time goes (kernels, events, host), and the GPU tests its
# changes touch (hdim 64 / 128 bf16 units only: other head dims' cases fail for want of units).
START=$(date +%s)
export PYTHONUNBUFFERED=1
t() { echo "t=$(( $(date +%s)-START ))s"; }
gunzip -c .ab/libs/fold2.so.gz > dash/_C.abi3.so
timeout 100 python3 bench/kernel_breakdown.py --calls 30 --hdim 128 --hidden 4096 --heads-kv 8 --seqlen 4096 16384 --mask causal --impl dash_det dash > $OUT/k_gqa.txt 2>&1; echo "k gqa rc=$? $(t)"
timeout 60 python3 bench/kernel_breakdown.py --calls 30 --hdim 128 --seqlen 4096 --mask causal full --impl dash_det dash > $OUT/k_mha.txt 2>&1; echo "k mha rc=$? $(t)"
timeout 300 python3 -m pytest -q -p no:cacheprovider tests/test_gqa.py tests/test_invariance.py tests/test_varlen.py tests/test_deadlock.py tests/test_determinism.py -k "not float16 and not fp16 and not 192 and not 256 and not 96" > $OUT/tests_fold2.txt 2>&1; echo "tests rc=$? $(tail -1 $OUT/tests_fold2.txt) $(t)"
grep -v "plan\|Warn\|warn" $OUT/k_*.txt
grep -E "^FAILED" $OUT/tests_fold2.txt | head -20
echo "done $(t)"
