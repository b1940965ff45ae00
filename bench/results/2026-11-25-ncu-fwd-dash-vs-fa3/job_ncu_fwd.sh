#!/bin/bash
# Nsight Compute, forward hdim 128 4k (full, causal): dash and FA3, per-instruction stall samples (SASS csv) + pipe summary.
START=$(date +%s)
export CC=/usr/bin/gcc CXX=/usr/bin/g++ CUTLASS_PATH=$PWD/.site/cutlass/include PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
rm -rf build dash/_C.abi3.so
DASH_INSTANTIATIONS='fwd_hdim128_bf16_full,fwd_hdim128_bf16_band' MAX_JOBS=16 python3 setup.py build_ext --inplace > $OUT/build.log 2>&1; echo "build rc=$? $(( $(date +%s)-START ))s"
for impl in dash fa3; do
  if [ $impl = dash ]; then K="-k regex:attn_fwd_sm90"; else K="--kernel-name-base demangled -k regex:FlashAttnFwdSm90"; fi
  for mask in full causal; do
    C=""; [ $mask = causal ] && C="--causal"
    timeout 120 ncu --clock-control none --profile-from-start off $K --section SourceCounters --section WarpStateStats --section SpeedOfLight --section ComputeWorkloadAnalysis --import-source no -o $OUT/${impl}_$mask env PYTHONPATH=$PWD/.ab/fa3:$PWD python3 tools/profile_bwd.py --pass fwd --impl $impl --hdim 128 --seqlen 4096 $C > $OUT/ncu_${impl}_$mask.log 2>&1
    echo "ncu $impl $mask rc=$? t=$(( $(date +%s)-START ))s"
    ncu --import $OUT/${impl}_$mask.ncu-rep --page source --csv --print-source sass > $OUT/src_${impl}_$mask.csv 2>/dev/null
    ncu --import $OUT/${impl}_$mask.ncu-rep --print-details all > $OUT/details_${impl}_$mask.txt 2>/dev/null
    rm -f $OUT/${impl}_$mask.ncu-rep
  done
done
cd $OUT && gzip -f src_*.csv && tar czf logs.tgz *.txt *.log && rm -f *.txt *.log; ls -la
