#!/bin/bash
# Forward A/B: variants .ab/<v>.so swapped into dash/ in turn; plain and softcap 30.
VS="$1"; ROUNDS="$2"; TV="$3"
mkdir -p $OUT /tmp/ab
for rep in $(seq 1 $ROUNDS); do
for v in $VS; do
  cp .ab/$v.so dash/_C.abi3.so
  for sc in 0 30; do
    timeout 150 python3 bench/bench_fwd.py --hdims ${HD:-64 128} --seqlens 4096 16384 --masks full causal --impls dash --warm-s 1 --min-s 0.5 --softcap $sc --out /tmp/ab/f_${v}_${sc}_$rep > /tmp/ab/f_${v}_${sc}_$rep.log 2>&1
    grep -E "^\| *(64|128) " /tmp/ab/f_${v}_${sc}_$rep.log | sed "s/^/fwd $v sc$sc r$rep /" >> $OUT/ab.txt
  done
done
done
if [ "$TV" != "-" ]; then
  cp .ab/$TV.so dash/_C.abi3.so
  timeout 200 python3 -m pytest -q -p no:cacheprovider tests/test_fwd.py 2>&1 | tail -15 > $OUT/tests_$TV.txt
  grep -h "WARNING" /tmp/ab/f_${TV}_*.log >> $OUT/tests_$TV.txt
fi
