#!/bin/bash
# Per-instruction stall attribution of dash's hdim 64 causal 16k backward (det): ncu report + SASS source page.
START=$(date +%s)
export PYTHONPATH=$PWD CC=/usr/bin/gcc CXX=/usr/bin/g++ CUTLASS_PATH=$PWD/.site/cutlass/include PATH=$PATH:/usr/local/cuda/bin
rm -rf build dash/_C.abi3.so
DASH_INSTANTIATIONS='bwd_hdim64_bf16_band,fwd_hdim64_bf16_band,bwd_hdim128_bf16_band,fwd_hdim128_bf16_band' MAX_JOBS=16 python3 setup.py build_ext --inplace > $OUT/build.log 2>&1; echo "build rc=$? $(( $(date +%s)-START ))s"
ncu --version | tail -1
for hd in 64 128; do
timeout 150 ncu --clock-control none --profile-from-start off -k regex:attn_bwd_sm90 --section SourceCounters --section WarpStateStats --import-source no -o $OUT/dash$hd python3 tools/profile_bwd.py --hdim $hd --causal --deterministic > $OUT/ncu_run$hd.log 2>&1; echo "ncu rc=$? t=$(( $(date +%s)-START ))s"
ncu --import $OUT/dash$hd.ncu-rep --page source --csv --print-source sass > $OUT/src$hd.csv 2> $OUT/src$hd.err; echo "src rc=$? $(wc -l < $OUT/src$hd.csv) lines"
done
cd $OUT && gzip -f src64.csv src128.csv; ls -la
