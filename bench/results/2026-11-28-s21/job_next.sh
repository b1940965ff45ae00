#!/bin/bash
# Run at the end of session 21 (RESULTS.md item 174; written as next session's job): on main's final library of session 21 (00bcf24's kernels;
# .ab/libs/twob2.so.gz, or .ci/run's build), (1) Nsight's stall samples of the hdim 64 causal
# backward (two_bodies) and of hdim 128 causal, dash det against FA3 non-det, 16k (sum them with
# ncu_segments.py: item 170's segments, new offsets); (2) the GQA rows of issue 15's grid (Llama-3-8B
# 32 / 8, hdim 128, beside FA3; last run in item 158) and issue 13's det / non-det at 192 and 192 x
# 128 full, GQA 16 / 4, 2k / 4k (item 164 measured it from a sweep's cells only). About 5 minutes.
# Carry the library and .ab/fa3.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT/ncu
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/.ab/fa3:$PYTHONPATH
LIB=${LIB:-twob2}; gunzip -c .ab/libs/$LIB.so.gz > dash/_C.abi3.so
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
D=bench/results/2026-11-28-causal-gap
for spec in "dash_det 64 16384 causal" "dash_det 128 16384 causal" "fa3 128 16384 causal"; do
  set -- $spec; name=$1_$2
  timeout 100 $NCU --clock-control none --kernel-name-base demangled --kernel-name regex:"attn_bwd_sm90_kernel|FlashAttnBwdSm90" \
    --launch-skip 5 --launch-count 1 --section SourceCounters --section WarpStateStats --metrics sm__cycles_active.avg,sm__cycles_elapsed.avg \
    --import-source no -o /tmp/rep_$name -f python3 $D/ncu_one.py $spec > $OUT/ncu/ncu_$name.log 2>&1
  $NCU -i /tmp/rep_$name.ncu-rep --page source --csv --print-source sass > /tmp/src_$name.csv 2>> $OUT/ncu/ncu_$name.log
  $NCU -i /tmp/rep_$name.ncu-rep --page details --csv > $OUT/ncu/details_$name.csv 2>> $OUT/ncu/ncu_$name.log
  gzip -c /tmp/src_$name.csv > $OUT/ncu/src_$name.csv.gz
  echo "== $spec $(t)"; grep -E "cycles_active|cycles_elapsed" $OUT/ncu/details_$name.csv | tail -2
done
(cd $OUT/ncu && tar czf ../ncu.tgz ./*) && rm -rf $OUT/ncu
W="--warm-s 1 --min-s 0.5"
timeout 200 python3 bench/bench_bwd.py --hdim 128 --hidden 4096 --heads-kv 8 --seqlen 2048 4096 8192 16384 \
  --mask full causal --impl dash_det dash fa3_det fa3 $W --out /tmp/llama > $OUT/bwd_llama.txt 2>&1
echo "llama rc=$? at $(t)"; grep -E "^ *[0-9x]+ +[0-9]+ " $OUT/bwd_llama.txt
timeout 100 python3 bench/bench_bwd.py --hdim 192 192x128 --hidden 3072 --heads-kv 4 --seqlen 2048 4096 --mask full \
  --impl dash_det dash $W --out /tmp/h192 > $OUT/bwd_192.txt 2>&1
echo "192 rc=$? at $(t)"; grep -E "^ *[0-9x]+ +[0-9]+ " $OUT/bwd_192.txt
