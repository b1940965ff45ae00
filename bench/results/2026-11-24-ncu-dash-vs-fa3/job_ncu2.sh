#!/bin/bash
# Next session (issue 15 / 13): Nsight Compute on dash's and FA3's backward, same inputs, where FA3 leads most.
START=$(date +%s)
export PYTHONPATH=$PWD/.ab/fa3:$PWD CC=/usr/bin/gcc CXX=/usr/bin/g++ CUTLASS_PATH=$PWD/.site/cutlass/include PATH=$PATH:/usr/local/cuda/bin
if [ ! -f dash/_C.abi3.so ]; then MAX_JOBS=16 python3 setup.py build_ext --inplace > $OUT/build.log 2>&1; echo "build rc=$? $(( $(date +%s)-START ))s"; fi
SEC="--section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section WarpStateStats --section LaunchStats --section Occupancy --section SchedulerStats"
for shape in "128 --causal" "64 --causal" "192x128 --causal" "128"; do
  set -- $shape; tag="hd$1${2:+_causal}"
  timeout 150 ncu --clock-control none --profile-from-start off -k regex:attn_bwd_sm90 $SEC python3 tools/profile_bwd.py --hdim $shape --deterministic > $OUT/ncu_dash_$tag.txt 2>&1
  timeout 150 ncu --clock-control none --profile-from-start off --kernel-name-base demangled -k regex:FlashAttnBwd $SEC python3 tools/profile_bwd.py --impl fa3 --hdim $shape > $OUT/ncu_fa3_$tag.txt 2>&1
  echo "$tag t=$(( $(date +%s)-START ))s"; grep -E "Duration|Compute \(SM\) Throughput|Registers Per|Issue Slots Busy|No Eligible" $OUT/ncu_dash_$tag.txt $OUT/ncu_fa3_$tag.txt | head -20
done
