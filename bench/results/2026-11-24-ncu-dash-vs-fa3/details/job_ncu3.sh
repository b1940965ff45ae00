#!/bin/bash
# Nsight Compute details (stall reasons, pipes, instruction mix, SASS hot spots): dash det vs FA3 (non-det and det), hdim 64 / 128 causal 16k.
START=$(date +%s)
export PYTHONPATH=$PWD/.ab/fa3:$PWD CC=/usr/bin/gcc CXX=/usr/bin/g++ CUTLASS_PATH=$PWD/.site/cutlass/include PATH=$PATH:/usr/local/cuda/bin
rm -rf build dash/_C.abi3.so
DASH_INSTANTIATIONS='bwd_hdim64_bf16_band,bwd_hdim128_bf16_band,fwd_hdim64_bf16_band,fwd_hdim128_bf16_band' MAX_JOBS=16 python3 setup.py build_ext --inplace > $OUT/build.log 2>&1; echo "build rc=$? $(( $(date +%s)-START ))s"
SEC="--section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section InstructionStats --section SourceCounters --print-details all"
for hd in 64 128; do
  timeout 120 ncu --clock-control none --profile-from-start off -k regex:attn_bwd_sm90 $SEC python3 tools/profile_bwd.py --hdim $hd --causal --deterministic > $OUT/ncu_dash_hd${hd}_causal.txt 2>&1
  timeout 120 ncu --clock-control none --profile-from-start off --kernel-name-base demangled -k regex:FlashAttnBwdSm90 $SEC python3 tools/profile_bwd.py --impl fa3 --hdim $hd --causal > $OUT/ncu_fa3_hd${hd}_causal.txt 2>&1
  timeout 120 ncu --clock-control none --profile-from-start off --kernel-name-base demangled -k regex:FlashAttnBwdSm90 $SEC python3 tools/profile_bwd.py --impl fa3 --hdim $hd --causal --deterministic > $OUT/ncu_fa3det_hd${hd}_causal.txt 2>&1
  echo "hd$hd t=$(( $(date +%s)-START ))s"
done
cd $OUT && tar czf ncu3.tgz ncu_*.txt && rm ncu_*.txt
