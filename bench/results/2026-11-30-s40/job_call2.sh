#!/bin/bash
# Session 40, call 2, on `v96full` (this branch's whole library: hdim 96's backward with V from registers):
# (1) the backward beside FlashAttention-3 at hdim 96 (`.ab/fa396`, FA3 0251105a built with hdim 96 only),
# (2) Nsight Compute of one hdim 96 16k full non-det backward each (dash, FA3): where the 0.91x sits,
# (3) the GPU test files that reach hdim 96's backward.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT/ncu
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/v96full.so.gz > dash/_C.abi3.so
mkdir -p .ab/fa396/flash_attn_3 && gunzip -c .ab/fa396z/_C.abi3.so.gz > .ab/fa396/flash_attn_3/_C.abi3.so
cp .ab/fa396z/__init__.py .ab/fa396/flash_attn_3/ && cp .ab/fa396z/flash_attn_interface.py .ab/fa396z/flash_attn_config.py .ab/fa396/
PYTHONPATH=$PWD/.ab/fa396 timeout 150 python3 bench/bench_bwd.py --hdim 96 --seqlen 2048 4096 16384 --mask full causal \
  --impl dash_det dash fa3_det fa3 --warm-s 1 --min-s 0.5 > $OUT/bwd_fa3_h96.txt 2>&1
echo "bench rc=$? at $(t)"; tail -16 $OUT/bwd_fa3_h96.txt
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
for impl in dash fa3; do
  if [ $impl = dash ]; then k="regex:attn_bwd_sm90"; else k="regex:FlashAttnBwdSm90"; fi
  PYTHONPATH=$PWD/.ab/fa396 timeout 80 $NCU --clock-control none --profile-from-start off --kernel-name-base demangled -k "$k" \
    --launch-count 1 --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
    --section MemoryWorkloadAnalysis_Tables --section WarpStateStats --section SchedulerStats --section LaunchStats \
    --section SourceCounters --section InstructionStats \
    --metrics sm__cycles_active.avg,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_reads.avg.pct_of_peak_sustained_elapsed,l1tex__data_bank_writes.avg.pct_of_peak_sustained_elapsed \
    --import-source no -o /tmp/rep_$impl -f python3 tools/profile_bwd.py --impl $impl --hdim 96 --seqlen 16384 > $OUT/ncu/ncu_$impl.log 2>&1
  echo "ncu $impl rc=$? at $(t)"
  $NCU -i /tmp/rep_$impl.ncu-rep --page details --csv > $OUT/ncu/details_$impl.csv 2>> $OUT/ncu/ncu_$impl.log
  $NCU -i /tmp/rep_$impl.ncu-rep --page source --csv --print-source sass > /tmp/src_$impl.csv 2>> $OUT/ncu/ncu_$impl.log
  python3 bench/results/2026-11-28-causal-gap/ncu_stalls.py /tmp/src_$impl.csv 30 > $OUT/ncu/stalls_$impl.txt 2>&1
  gzip -c /tmp/src_$impl.csv > $OUT/ncu/src_$impl.csv.gz
  grep -E '"(Duration|SM Active Cycles|Executed Instructions|Issue Slots Busy|No Eligible|Registers Per Thread|Shared Memory|sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active|l1tex__data_bank_reads.avg.pct_of_peak_sustained_elapsed|l1tex__data_bank_writes.avg.pct_of_peak_sustained_elapsed|Warp Cycles Per Issued Instruction|Memory Throughput|L1/TEX Hit Rate|L2 Hit Rate|DRAM Throughput)"' $OUT/ncu/details_$impl.csv | awk -F'","' '{print $(NF-2)" = "$NF" "$(NF-1)}' | sort -u | head -24
done
(cd $OUT/ncu && tar czf ../ncu.tgz ./*) && rm -rf $OUT/ncu
left=$(( 585 - ($(date +%s) - START) ))
FILES="test_head_dims test_softcap test_determinism test_bwd_correctness test_window test_varlen test_gqa test_deadlock" SASS=0 \
  STRESS_MAX_S=0 DEADLINE=$left OUT=$OUT/t bash tools/gpu_test_job.sh
echo "done at $(t)"
