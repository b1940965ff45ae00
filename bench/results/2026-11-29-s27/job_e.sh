#!/bin/bash
# Where the packed short mix's forward trails FA3's varlen forward (0.984x in next/), one launch each
# under Nsight Compute (clocks not locked): dash's hdim 128 band kernel (main: the CI build of
# 525be6d) and FA3's, bench_varlen's short mix (documents of 16-1024 tokens) and, for contrast, the
# long mix (1.024x). Sections and metrics as session 26's job_e.sh.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT/ncu
gunzip -c .ab/libs/main.so.gz > dash/_C.abi3.so
export PYTHONPATH=$PWD/.ab/fa3v:$PYTHONPATH
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
for spec in "dash short" "fa3 short" "dash long" "fa3 long"; do
  set -- $spec; name=$1_$2
  timeout 70 $NCU --clock-control none --kernel-name-base demangled --kernel-name regex:"attn_fwd_sm90_kernel|FlashAttnFwdSm90" \
    --launch-skip 5 --launch-count 1 --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats \
    --section SchedulerStats --section LaunchStats --section SourceCounters --section InstructionStats \
    --metrics sm__cycles_active.avg,sm__cycles_elapsed.avg,sm__inst_executed_pipe_xu.sum,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum \
    --import-source no -o /tmp/rep_$name -f python3 bench/results/2026-11-29-s27/ncu_varlen_one.py $spec > $OUT/ncu/ncu_$name.log 2>&1
  $NCU -i /tmp/rep_$name.ncu-rep --page details --csv > $OUT/ncu/details_$name.csv 2>> $OUT/ncu/ncu_$name.log
  $NCU -i /tmp/rep_$name.ncu-rep --page source --csv --print-source sass > /tmp/src_$name.csv 2>> $OUT/ncu/ncu_$name.log
  python3 bench/results/2026-11-28-causal-gap/ncu_stalls.py /tmp/src_$name.csv 30 > $OUT/ncu/stalls_$name.txt 2>&1
  gzip -c /tmp/src_$name.csv > $OUT/ncu/src_$name.csv.gz
  echo "== $spec $(t)"
  grep -E '"(Duration|SM Active Cycles|Elapsed Cycles|Executed Instructions|Issue Slots Busy|Registers Per Thread|Grid Size|Block Size|No Eligible|Active Warps Per Scheduler|Eligible Warps Per Scheduler|sm__inst_executed_pipe_xu.sum|sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active|Warp Cycles Per Issued Instruction)"' $OUT/ncu/details_$name.csv | awk -F'","' '{print $(NF-2)" = "$NF" "$(NF-1)}' | sort -u | head -20
done
(cd $OUT/ncu && tar czf ../ncu.tgz ./*) && rm -rf $OUT/ncu
echo "done at $(t)"
