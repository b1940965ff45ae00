#!/bin/bash
# Session 42, call 2: hdim 192's deterministic tax taken apart on `land41`: the non-det kernel run in the
# deterministic calls' orders (same order, no chain), then Nsight Compute of one 16k causal backward, det and
# non-det (where the MMA warps wait in each).
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT/ncu
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/land41.so.gz > dash/_C.abi3.so
python3 bench/bench_bwd.py --hdim 192 --seqlen 4096 16384 --mask causal --impl dash dash:diagonal dash:descending dash_det dash_det:descending --warm-s 1 --min-s 0.5 --out $OUT/b192c > $OUT/b192c.txt 2>&1
echo "192 causal at $(t)"
python3 bench/bench_bwd.py --hdim 192 --seqlen 4096 16384 --mask full --impl dash dash:ascending dash:shift dash_det dash_det:shift --warm-s 1 --min-s 0.5 --out $OUT/b192f > $OUT/b192f.txt 2>&1
echo "192 full at $(t)"
grep -h "^ *192" $OUT/b192c.txt $OUT/b192f.txt
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
for mode in det nondet; do
  name=dash_192c_$mode; flag=""; [ $mode = det ] && flag="--deterministic"
  timeout 90 $NCU --clock-control none --profile-from-start off --kernel-name-base demangled -k "regex:attn_bwd_sm90" \
    --launch-count 1 --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats \
    --section SchedulerStats --section LaunchStats --section SourceCounters --section InstructionStats \
    --metrics sm__cycles_active.avg,smsp__inst_executed.sum \
    --import-source no -o /tmp/rep_$name -f python3 tools/profile_bwd.py --hdim 192 --seqlen 16384 --causal $flag > $OUT/ncu/ncu_$name.log 2>&1
  echo "ncu $name rc=$? at $(t)"
  $NCU -i /tmp/rep_$name.ncu-rep --page details --csv > $OUT/ncu/details_$name.csv 2>> $OUT/ncu/ncu_$name.log
  $NCU -i /tmp/rep_$name.ncu-rep --page source --csv --print-source sass > /tmp/src_$name.csv 2>> $OUT/ncu/ncu_$name.log
  python3 bench/results/2026-11-28-causal-gap/ncu_stalls.py /tmp/src_$name.csv 40 > $OUT/ncu/stalls_$name.txt 2>&1
  gzip -c /tmp/src_$name.csv > $OUT/ncu/src_$name.csv.gz
  grep -E '"(Duration|SM Active Cycles|Executed Instructions|Issue Slots Busy|Warp Cycles Per Issued Instruction)"' $OUT/ncu/details_$name.csv | awk -F'","' '{print $(NF-2)" = "$NF}' | sort -u
done
(cd $OUT/ncu && tar czf ../ncu.tgz ./*) && rm -rf $OUT/ncu
rm -rf $OUT/b192c $OUT/b192f
echo "done at $(t)"
