#!/bin/bash
# Two-phase diagonal, second look: the failing test, 8k, few-wave shapes, windows, packed mixes.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT/l
ROOT=$PWD
export PYTHONUNBUFFERED=1
mkdir -p /tmp/basetree && tar -xf .ab/basetree.tar -C /tmp/basetree
gunzip -c .ab/base.so.gz > /tmp/basetree/dash/_C.abi3.so
gunzip -c .ab/new.so.gz > $ROOT/dash/_C.abi3.so
START=$(date +%s)
(cd $ROOT && PYTHONPATH=$ROOT timeout 150 python3 -m pytest -q -p no:cacheprovider tests/test_invariance.py tests/test_determinism.py -k "not softcap" > $OUT/l/tests_new.txt 2>&1; echo "rc=$? $(( $(date +%s) - START ))s" >> $OUT/l/tests_new.txt)
tail -3 $OUT/l/tests_new.txt
run() {  # name dir lag args...
  local name=$1 dir=$2 lag=$3; shift 3
  (cd $dir && if [ "$lag" = "-" ]; then unset DASH_DIAGONAL_LAG; else export DASH_DIAGONAL_LAG=$lag; fi; \
   PYTHONPATH=$dir timeout 100 python3 "$@" --warm-s 1 --min-s 0.5 --out /tmp/bo_$name >> $OUT/l/$name.txt 2>&1)
}
for r in 1 2; do
  for side in base:/tmp/basetree:- new:$ROOT:528 new132:$ROOT:132; do
    IFS=: read s d l <<< "$side"
    run ${s}_main $d $l bench/bench_bwd.py --hdim 128 --seqlen 8192 16384 --mask causal --impl dash_det
  done
  echo "main round $r $(( $(date +%s) - START ))s"
done
for side in base:/tmp/basetree:- new:$ROOT:528; do
  IFS=: read s d l <<< "$side"
  run ${s}_onewave1 $d $l bench/bench_bwd.py --hdim 128 --seqlen 16384 --total-tokens 16384 --hidden 128 --mask causal --impl dash_det
  run ${s}_onewave4 $d $l bench/bench_bwd.py --hdim 128 --seqlen 4096 --total-tokens 4096 --hidden 512 --mask causal --impl dash_det
  run ${s}_gqa $d $l bench/bench_bwd.py --hdim 128 --seqlen 16384 --total-tokens 16384 --hidden 512 --heads-kv 1 --mask causal --impl dash_det
  run ${s}_window $d $l bench/bench_bwd.py --hdim 128 --seqlen 16384 --total-tokens 32768 --mask causal --window 4096 --impl dash_det
  run ${s}_varlen $d $l bench/bench_varlen.py --mix long short --impl dash_det
  echo "side $s $(( $(date +%s) - START ))s"
done
cd $OUT && tar -czf logs.tgz l && rm -rf l
