#!/bin/bash
# Nsight Compute counters of one backward main kernel each (clocks not locked), hdim 64 16k:
# work per step beside FA3's (instructions, shared-memory wavefronts, L2 and DRAM bytes).
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
gunzip -c .ab/libs/f155.so.gz > dash/_C.abi3.so
export PYTHONPATH=$PWD/.ab/fa3:$PYTHONPATH
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
M=gpu__time_duration.sum,sm__cycles_elapsed.avg,sm__inst_executed.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,lts__t_bytes.sum,dram__bytes_read.sum,dram__bytes_write.sum,smsp__inst_executed_op_shared_st.sum,smsp__inst_executed_op_shared_ld.sum,sm__warps_active.avg.pct_of_peak_sustained_active
for spec in "dash_det 64 16384 causal" "fa3 64 16384 causal" "dash 64 16384 causal" "dash_det 64 16384 full" "fa3 64 16384 full"; do
  set -- $spec
  timeout 60 $NCU --clock-control none --kernel-name-base demangled --kernel-name regex:"attn_bwd_sm90_kernel|FlashAttnBwdSm90" --launch-skip 5 --launch-count 1 \
    --metrics $M --csv python3 bench/results/2026-11-28-causal-gap/ncu_one.py $spec > $OUT/ncu_$1_$4.csv 2> $OUT/ncu_$1_$4.err
  echo "== $spec rc=$? $(t)"; awk -F'","' 'NF>3{print $(NF-2), $NF}' $OUT/ncu_$1_$4.csv | tail -10; tail -2 $OUT/ncu_$1_$4.err
done
