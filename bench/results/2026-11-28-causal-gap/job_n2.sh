#!/bin/bash
# Prepared for the next session (RESULTS item 159's lead (b); not run yet): where the MMA warps of
# dash's hdim 64 causal backward wait, beside FA3's, per instruction: Nsight Compute's source
# counters (warp-stall samples per SASS instruction) and sm__cycles_active, one launch each
# (clocks not locked), hdim 64 16k causal, dash det / dash non-det / FA3 non-det. The reading in
# fa3_compare.md lists the waits to look at (Q full, dO full, partner dS barrier, dQ empty,
# kv_full). cb47de3 library (was f155: same kernels); carry .ab/libs/$LIB.so.gz, .ab/fa3. About 1 minute (ran in 55 s on session 20's first try).
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
LIB=${LIB:-cb47de3}  # a library in .ab/libs (LIB=4804022: main after session 20)
gunzip -c .ab/libs/$LIB.so.gz > dash/_C.abi3.so
export PYTHONPATH=$PWD/.ab/fa3:$PYTHONPATH
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
D=bench/results/2026-11-28-causal-gap
for spec in "dash_det 64 16384 causal" "dash 64 16384 causal" "fa3 64 16384 causal"; do
  set -- $spec
  timeout 120 $NCU --clock-control none --kernel-name-base demangled --kernel-name regex:"attn_bwd_sm90_kernel|FlashAttnBwdSm90" \
    --launch-skip 5 --launch-count 1 --section SourceCounters --section WarpStateStats --metrics sm__cycles_active.avg,sm__cycles_elapsed.avg \
    --import-source no -o /tmp/rep_$1 -f python3 $D/ncu_one.py $spec > $OUT/ncu_$1.log 2>&1
  $NCU -i /tmp/rep_$1.ncu-rep --page source --csv --print-source sass > /tmp/src_$1.csv 2>> $OUT/ncu_$1.log
  $NCU -i /tmp/rep_$1.ncu-rep --page details --csv > $OUT/details_$1.csv 2>> $OUT/ncu_$1.log
  python3 $D/ncu_stalls.py /tmp/src_$1.csv 40 > $OUT/stalls_$1.txt 2>&1
  gzip -c /tmp/src_$1.csv > $OUT/src_$1.csv.gz
  echo "== $spec $(t)"; head -30 $OUT/stalls_$1.txt; grep -E "cycles_active|cycles_elapsed" $OUT/details_$1.csv | tail -2
done
(cd $OUT && tar czf n2_logs.tgz --exclude=n2_logs.tgz ./* && find . -type f ! -name n2_logs.tgz -delete)
