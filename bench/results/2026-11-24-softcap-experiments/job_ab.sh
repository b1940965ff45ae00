#!/bin/bash
# A/B of the exp2 share: variants .ab/<v>.so (fwd num/8, bwd num/8), swapped into dash/ in turn.
# usage: job_ab.sh "<variants>" <rounds> <test_variant or ->
VS="$1"; ROUNDS="$2"; TV="$3"
mkdir -p $OUT /tmp/ab
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader > $OUT/gpu.txt
for rep in $(seq 1 $ROUNDS); do
for v in $VS; do
  cp .ab/$v.so dash/_C.abi3.so
  for sc in 0 30; do
    timeout 150 python3 bench/bench_fwd.py --hdims 64 128 --seqlens 4096 16384 --masks full causal --impls dash --warm-s 1 --min-s 0.5 --softcap $sc --out /tmp/ab/f_${v}_${sc}_$rep > /tmp/ab/f_${v}_${sc}_$rep.log 2>&1
    grep -E "^\| *(64|128) " /tmp/ab/f_${v}_${sc}_$rep.log | sed "s/^/fwd $v sc$sc r$rep /" >> $OUT/ab.txt
    timeout 150 python3 bench/bench_bwd.py --hdim 64 128 --seqlen 4096 16384 --mask full causal --impl dash_det --warm-s 1 --min-s 0.5 --softcap $sc --out /tmp/ab/b_${v}_${sc}_$rep > /tmp/ab/b_${v}_${sc}_$rep.log 2>&1
    grep -E "^ *(64|128) +[0-9]+ +(full|causal)" /tmp/ab/b_${v}_${sc}_$rep.log | sed "s/^/bwd $v sc$sc r$rep /" >> $OUT/ab.txt
  done
done
done
if [ "$TV" != "-" ]; then
  cp .ab/$TV.so dash/_C.abi3.so
  timeout 200 python3 -m pytest -q -p no:cacheprovider tests/test_exp2_poly.py tests/test_softcap.py tests/test_fwd.py tests/test_bwd_correctness.py -k "bf16 or bfloat16 or exp2" -x 2>&1 | tail -25 > $OUT/tests_$TV.txt
fi
tail -5 /tmp/ab/f_*_1.log | head -40 > $OUT/sample_logs.txt
