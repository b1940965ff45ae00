#!/bin/bash
# Where the softcap forward waits now, one launch each under Nsight Compute (clocks not locked), on b29
# (the landed library): hdim 64 full 4k plain and softcap 30 (the fixed-offset kernel with one of four
# exponentials on the FMA pipe) and hdim 192 full 4k plain and softcap 30 (fixed offset, 7-11% cost).
# Sections and metrics as session 26's job_e.sh; per-instruction stalls by ncu_stalls.py.
# Prediction: at 64 the softcap kernel's XU (MUFU) pipe near its peak (the MUFU model's 2688 clocks a
# tile of ~3400 measured), at 192 the XU pipe well below it and issue or GMMA waits instead.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT/ncu
gunzip -c .ab/libs/b29.so.gz > dash/_C.abi3.so
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
for spec in "64 4096 full 30" "64 4096 full 0" "192 4096 full 30" "192 4096 full 0"; do
  set -- $spec; name=h$1_$3_cap$4
  timeout 55 $NCU --clock-control none --kernel-name-base demangled --kernel-name regex:"attn_fwd_sm90_kernel" \
    --launch-skip 5 --launch-count 1 --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats \
    --section SchedulerStats --section LaunchStats --section SourceCounters --section InstructionStats \
    --metrics sm__cycles_active.avg,sm__cycles_elapsed.avg,sm__inst_executed_pipe_xu.sum,sm__pipe_xu_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum \
    --import-source no -o /tmp/rep_$name -f python3 bench/results/2026-11-29-s29/ncu_fwd_one.py $spec > $OUT/ncu/ncu_$name.log 2>&1
  $NCU -i /tmp/rep_$name.ncu-rep --page details --csv > $OUT/ncu/details_$name.csv 2>> $OUT/ncu/ncu_$name.log
  $NCU -i /tmp/rep_$name.ncu-rep --page source --csv --print-source sass > /tmp/src_$name.csv 2>> $OUT/ncu/ncu_$name.log
  python3 bench/results/2026-11-28-causal-gap/ncu_stalls.py /tmp/src_$name.csv 30 > $OUT/ncu/stalls_$name.txt 2>&1
  gzip -c /tmp/src_$name.csv > $OUT/ncu/src_$name.csv.gz
  echo "== $spec $(t)"
  grep -E '"(Duration|SM Active Cycles|Executed Instructions|Issue Slots Busy|No Eligible|Eligible Warps Per Scheduler|sm__inst_executed_pipe_xu.sum|sm__pipe_xu_cycles_active.avg.pct_of_peak_sustained_active|sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active|Warp Cycles Per Issued Instruction)"' $OUT/ncu/details_$name.csv | awk -F'","' '{print $(NF-2)" = "$NF" "$(NF-1)}' | sort -u | head -14
done
(cd $OUT/ncu && tar czf ../ncu.tgz ./*) && rm -rf $OUT/ncu
echo "done at $(t)"
