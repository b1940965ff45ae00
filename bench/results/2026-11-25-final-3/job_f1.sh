#!/bin/bash
# The final library (every unit, built on the CI machine from the working tree): check_sass, every GPU test
# file, then the stress loop with what time is left.
START=$(date +%s); DEADLINE=575
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/final3.so.gz > dash/_C.abi3.so
python3 tools/check_sass.py dash/_C.abi3.so > $OUT/sass.txt 2>&1; echo "sass rc=$? $(grep -c ' ok$' $OUT/sass.txt) ok $(grep -c FAIL $OUT/sass.txt) FAIL"
for t in test_fwd test_window test_softcap test_head_dims test_varlen test_gqa test_deadlock test_determinism test_bwd_correctness test_invariance test_flash_attn_interface_gpu test_torch_attention_integration test_transformers_integration test_gemma2_gpu test_distributed_gpu; do
  left=$(( DEADLINE - 40 - ($(date +%s)-START) ))
  if [ $left -lt 15 ]; then echo "SKIP $t (no time)"; continue; fi
  timeout -s KILL $left python3 -m pytest -q -p no:cacheprovider tests/$t.py > $OUT/$t.txt 2>&1
  echo "$t rc=$? at $(( $(date +%s)-START ))s: $(grep -E 'passed|failed|error' $OUT/$t.txt | tail -1)"
done
left=$(( DEADLINE - ($(date +%s)-START) ))
[ $left -gt 25 ] && timeout -s KILL $left python3 tools/stress_calls.py $(( left - 15 )) > $OUT/stress.txt 2>&1; echo "stress rc=$?: $(tail -1 $OUT/stress.txt)"
cd $OUT && tar czf logs.tgz *.txt && rm -f *.txt
