#!/bin/bash
# Where the backward's energy goes: instruction, smem, L2 and DRAM counts of one call, dash det
# against FlashAttention-3 non-det (hdim 128 causal / full 16k, hdim 64 causal 16k).
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
mkdir -p $OUT/en
gunzip -c .ab/libs/walk.so.gz > dash/_C.abi3.so
M=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,lts__t_sector_hit_rate.pct,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed_pipe_fma.sum,smsp__inst_executed_pipe_alu.sum,smsp__inst_executed_pipe_xu.sum,smsp__inst_executed_pipe_lsu.sum,smsp__inst_executed_pipe_uniform.sum,smsp__inst_executed_pipe_fmaheavy.sum,smsp__inst_executed_pipe_fmalite.sum,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum,lts__t_sectors_srcunit_tex_op_red.sum,lts__t_sectors_op_red.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,lts__t_sectors_op_atom.sum
for cfg in "128 --causal" "128" "64 --causal"; do
  set -- $cfg; hd=$1; shift; tag=${hd}$( [ -n "$1" ] && echo _causal || echo _full)
  timeout 120 ncu --clock-control none --profile-from-start off -k regex:attn_bwd_sm90 --metrics $M \
    python3 tools/profile_bwd.py --hdim $hd $@ --deterministic > $OUT/en/dash_$tag.txt 2>&1
  PYTHONPATH=$PWD/.ab/fa3:$PWD timeout 120 ncu --clock-control none --profile-from-start off --kernel-name-base demangled \
    -k regex:FlashAttnBwdSm90 --metrics $M python3 tools/profile_bwd.py --impl fa3 --hdim $hd $@ > $OUT/en/fa3_$tag.txt 2>&1
done
cd $OUT && tar czf en.tgz en; ls -la
