#!/bin/bash
# Call 2 (session 34): row bands (RESULTS item 248). Carry .ab/libs/cut2.so.gz (branch exp/row-cut at its
# second commit, hdim 128 bf16 forward and backward units only): with DASH_EXP_BAND_ROWS=<B> a deterministic
# fixed-length causal call cuts its diagonal walks at every multiple of B Q tiles, each KV tile's bands
# dealt one after another, lowest first, each adding its predecessors' fp32 dK / dV sum to its own.
# (1) Tests on cut2 with B = 3 (three or more bands a walk from 4 Q tiles up) and B = 2: hdim 128 bf16 cases
#     of test_bwd_correctness, test_determinism, test_deadlock, test_invariance (expected to fail: packed
#     against padded, which the experiment does not cut, and the 192 x 128 cases -k 128 picks, no units).
# (2) Three rounds, each process alone, det (and non-det at B = 0), causal, hdim 128: 16 heads at 16k and
#     32k, 4 heads (hidden 512) at 16k and 32k; B = 0 / 128 / 64.
#     Prediction (walk_split_model, lower band first, handoff 0.5-1 step; call 1 realised 11-57% of it):
#     B = 128 against 0: 16 heads 16k +0.5..+1% (call 1: M / 2 there +0.5%), 32k +0.5..+1.5%; 4 heads 16k
#     +1..+3%, 32k +4..+6% (M / 2 +3.6%). B = 64: 16 heads 16k -1..+1%, 4 heads 32k +3..+6%.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
D=bench/results/2026-11-30-s34
gunzip -c .ab/libs/cut2.so.gz > dash/_C.abi3.so
for B in 3 2; do
  DASH_EXP_BAND_ROWS=$B timeout 200 python3 -m pytest -q -p no:cacheprovider tests/test_bwd_correctness.py \
    tests/test_determinism.py tests/test_deadlock.py tests/test_invariance.py -k "128 and not fp16 and not float16 and not 192" \
    > $OUT/tests_band$B.txt 2>&1
  echo "tests B=$B rc=$? at $(t)"; grep -E "^FAILED|passed|failed" $OUT/tests_band$B.txt | tail -8
done
G='--hdim 128 --mask causal --warm-s 1 --min-s 0.5'
for round in 1 2 3; do
  for B in 0 128 64; do
    IMPL="dash_det"; [ $B = 0 ] && IMPL="dash_det dash"
    python3 $D/cut_bench.py $B --seqlen 16384 --impl $IMPL $G > $OUT/b_h16_16k_B${B}_r$round.txt 2>&1
    python3 $D/cut_bench.py $B --seqlen 32768 --total-tokens 32768 --impl $IMPL $G > $OUT/b_h16_32k_B${B}_r$round.txt 2>&1
    python3 $D/cut_bench.py $B --seqlen 16384 32768 --total-tokens 32768 --hidden 512 --impl $IMPL $G > $OUT/b_h4_B${B}_r$round.txt 2>&1
    echo "round $round B=$B at $(t)"
  done
done
for f in $OUT/b_*.txt; do echo "$(basename $f .txt): $(grep -E '^ *128 ' $f | tr -s ' ' | tr '\n' ';')"; done
tar czf $OUT/logs.tgz -C $OUT $(cd $OUT && ls b_*.txt tests_*.txt) && rm -f $OUT/b_*.txt
echo "all done at $(t)"
