#!/bin/bash
# Session 42, call 4: (1) a semaphore per warpgroup slice of each dQ tile (`slice`: 128 / 192 / 256 bf16 units; a
# slice's add waits only for the previous rank's add of that slice to land) against `land41`, det, two rounds,
# with the deterministic and deadlock tests of those head dims on `slice`; (2) on land41, deterministic full
# masks at 16k dealt in chunks of 2 / 4 walks (DASH_DEAL_CHUNK; the plan deals one walk a chunk there).
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
LIBS='.ab/libs/land41.so.gz .ab/libs/slice.so.gz' ROUNDS=2 SASS=0 TESTS_TIMEOUT=150 \
  TESTS='tests/test_determinism.py tests/test_deadlock.py tests/test_bwd_correctness.py -k "not fp16 and not float16 and not 64 and not 96"' \
  BENCH='bench/bench_bwd.py --hdim 128 192 256 --seqlen 4096 16384 --mask full causal --impl dash_det --warm-s 1 --min-s 0.5' \
  OUT=$OUT/ab timeout 420 bash bench/ab_job.sh > $OUT/ab_stdout.txt 2>&1
echo "ab rc=$? at $(t)"; grep -A16 "^| bench" $OUT/ab_stdout.txt; grep "tests rc" $OUT/ab_stdout.txt
gunzip -c .ab/libs/land41.so.gz > dash/_C.abi3.so
for c in def 2 4; do
  if [ $c = def ]; then E=""; else E="DASH_DEAL_CHUNK=$c"; fi
  env $E python3 bench/bench_bwd.py --hdim 128 192 --seqlen 16384 --mask full --impl dash_det --warm-s 1 --min-s 0.5 --out $OUT/x > $OUT/chunk_$c.txt 2>&1
  echo "chunk $c: $(grep -h '^ *1[29][28] ' $OUT/chunk_$c.txt | tr -s ' ' | tr '\n' ';')"
done
rm -rf $OUT/x; echo "done at $(t)"
