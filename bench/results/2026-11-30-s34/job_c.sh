#!/bin/bash
# Call 3 (session 34): the row cut in two without waits (RESULTS item 247). Carry .ab/libs/cut3.so.gz (branch
# exp/row-cut at its third commit, hdim 128 bf16 forward and backward units only): with DASH_EXP_ROW_CUT=<q>
# a deterministic fixed-length causal call of >= q Q tiles cuts its diagonal walks at ceil(M / 2); whichever
# band's warp finishes first leaves its slice of the fp32 dK / dV partial, the other adds it (call 1's cut1
# made the upper band wait for the lower one's partial).
# (1) Tests on cut3 with DASH_EXP_ROW_CUT=2, hdim 128 bf16 cases as in calls 1-2 (expected failures: packed
#     against padded).
# (2) Three rounds, det (and non-det with the cut off): 16 heads 8k / 16k, 4 heads (hidden 512) 16k / 32k,
#     cut off (0) and from 128 Q tiles. Prediction: where cut1 waited (its upper band finishing before the
#     lower one), the wait-free merge gains on it: cut against none 16 heads 8k -2..0% (cut1 -3.3%), 16k
#     +0.5..+1.5% (cut1 +0.5 / +1.1%, cut2 +0.5%), 4 heads 16k +2..+3%, 32k +3..+5% (cut1 +1.8 / +3.6%).
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
D=bench/results/2026-11-30-s34
gunzip -c .ab/libs/cut3.so.gz > dash/_C.abi3.so
DASH_EXP_ROW_CUT=2 timeout 200 python3 -m pytest -q -p no:cacheprovider tests/test_bwd_correctness.py \
  tests/test_determinism.py tests/test_deadlock.py tests/test_invariance.py -k "128 and not fp16 and not float16 and not 192" \
  > $OUT/tests_cut3.txt 2>&1
echo "tests rc=$? at $(t)"; grep -E "^FAILED|passed|failed" $OUT/tests_cut3.txt | tail -8
G='--hdim 128 --mask causal --warm-s 1 --min-s 0.5'
for round in 1 2 3; do
  for C in 0 128; do
    IMPL="dash_det"; [ $C = 0 ] && IMPL="dash_det dash"
    python3 $D/cut_bench.py $C --seqlen 8192 16384 --impl $IMPL $G > $OUT/c_h16_C${C}_r$round.txt 2>&1
    python3 $D/cut_bench.py $C --seqlen 16384 32768 --total-tokens 32768 --hidden 512 --impl $IMPL $G > $OUT/c_h4_C${C}_r$round.txt 2>&1
    echo "round $round C=$C at $(t)"
  done
done
for f in $OUT/c_*.txt; do echo "$(basename $f .txt): $(grep -E '^ *128 ' $f | tr -s ' ' | tr '\n' ';')"; done
tar czf $OUT/logs.tgz -C $OUT $(cd $OUT && ls c_*.txt tests_*.txt) && rm -f $OUT/c_*.txt
echo "all done at $(t)"
