#!/bin/bash
# The final library (every unit, built on the CI machine from the working tree): check_sass, every GPU test
# file, then forward tables: dash beside FlashAttention-3 (hdim 128 / 64) and beside cuDNN (96 .. 256).
START=$(date +%s); DEADLINE=565
export PYTHONUNBUFFERED=1
el() { echo "$(( $(date +%s)-START ))s"; }
gunzip -c .ab/libs/final4.so.gz > dash/_C.abi3.so
python3 tools/check_sass.py dash/_C.abi3.so > $OUT/sass.txt 2>&1; echo "sass rc=$? $(grep -c ' ok$' $OUT/sass.txt) ok $(grep -c FAIL $OUT/sass.txt) FAIL"
PYTHONPATH=$PWD/.ab/fa3:$PWD timeout 150 python3 bench/bench_fwd.py --hdims 128 64 --seqlens 2048 4096 8192 16384 --masks full causal --impls dash fa3 --warm-s 1 --min-s 0.5 > $OUT/fwd_fa3.txt 2>&1
echo "fwd vs fa3 rc=$? at $(el)"; grep -E '^\| (64|128) ' $OUT/fwd_fa3.txt
timeout 150 python3 bench/bench_fwd.py --hdims 96 192 192x128 256 --seqlens 2048 4096 8192 16384 --masks full causal --impls dash cudnn --warm-s 1 --min-s 0.5 > $OUT/fwd_other.txt 2>&1
echo "fwd other rc=$? at $(el)"; grep -E '^\| [0-9x]+ ' $OUT/fwd_other.txt
for t in test_fwd test_window test_softcap test_head_dims test_varlen test_gqa test_deadlock test_determinism test_bwd_correctness test_invariance test_flash_attn_interface_gpu test_torch_attention_integration test_transformers_integration test_gemma2_gpu test_distributed_gpu; do
  left=$(( DEADLINE - 10 - ($(date +%s)-START) ))
  if [ $left -lt 15 ]; then echo "SKIP $t (no time)"; continue; fi
  timeout -s KILL $left python3 -m pytest -q -p no:cacheprovider tests/$t.py > $OUT/$t.txt 2>&1
  echo "$t rc=$? at $(el): $(grep -E 'passed|failed|error' $OUT/$t.txt | tail -1)"
done
cd $OUT && tar czf logs.tgz *.txt && rm -f *.txt
