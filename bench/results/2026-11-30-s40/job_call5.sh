#!/bin/bash
# Session 40, call 5: Nsight Compute of one 16k full non-det backward at hdim 192 and 256, dash (`final`) and
# FlashAttention-3 (`.ab/fa3_192_256`: 0251105a, hdim 192 / 256 only, varlen off), the way call 2 found hdim 96's
# narrow dQ instructions: where the remaining 3-12% behind FA3's non-det backward sits (a lead for the next session).
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT/ncu
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/final.so.gz > dash/_C.abi3.so
P=.ab/fa3_192_256; mkdir -p $P/flash_attn_3 && gunzip -c .ab/fa3z/_C.abi3.so.gz > $P/flash_attn_3/_C.abi3.so
cp .ab/fa3z/__init__.py $P/flash_attn_3/ && cp .ab/fa3z/flash_attn_interface.py .ab/fa3z/flash_attn_config.py $P/
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
for hd in 192 256; do for impl in dash fa3; do
  if [ $impl = dash ]; then k="regex:attn_bwd_sm90"; else k="regex:FlashAttnBwdSm90"; fi
  name=${impl}_$hd
  PYTHONPATH=$PWD/$P timeout 60 $NCU --clock-control none --profile-from-start off --kernel-name-base demangled -k "$k" \
    --launch-count 1 --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats \
    --section SchedulerStats --section LaunchStats --section SourceCounters --section InstructionStats \
    --metrics sm__cycles_active.avg,smsp__inst_executed.sum,l1tex__data_bank_reads.avg.pct_of_peak_sustained_elapsed,l1tex__data_bank_writes.avg.pct_of_peak_sustained_elapsed \
    --import-source no -o /tmp/rep_$name -f python3 tools/profile_bwd.py --impl $impl --hdim $hd --seqlen 16384 > $OUT/ncu/ncu_$name.log 2>&1
  echo "ncu $name rc=$? at $(t)"
  $NCU -i /tmp/rep_$name.ncu-rep --page details --csv > $OUT/ncu/details_$name.csv 2>> $OUT/ncu/ncu_$name.log
  $NCU -i /tmp/rep_$name.ncu-rep --page source --csv --print-source sass > /tmp/src_$name.csv 2>> $OUT/ncu/ncu_$name.log
  python3 bench/results/2026-11-28-causal-gap/ncu_stalls.py /tmp/src_$name.csv 30 > $OUT/ncu/stalls_$name.txt 2>&1
  gzip -c /tmp/src_$name.csv > $OUT/ncu/src_$name.csv.gz
  grep -E '"(Duration|SM Active Cycles|Executed Instructions|Issue Slots Busy|l1tex__data_bank_reads.avg.pct_of_peak_sustained_elapsed|Warp Cycles Per Issued Instruction)"' $OUT/ncu/details_$name.csv | awk -F'","' '{print $(NF-2)" = "$NF}' | sort -u
done; done
(cd $OUT/ncu && tar czf ../ncu.tgz ./*) && rm -rf $OUT/ncu
echo "done at $(t)"
