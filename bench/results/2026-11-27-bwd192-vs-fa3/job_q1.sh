#!/bin/bash
# Head dim 192's backward beside FlashAttention-3's (issue 15: 0.90-0.93x FA3 non-det, the widest
# backward gap; the same tile, warpgroup count and stage depths as FA3's, so the difference is in
# the step). FA3 from .ab/fa3_192 (a 192-only peer build; carry it and .site). Builds dash's 192
# bf16 units, times both (steady state), then Nsight Compute on one 16k causal call of each:
# section counters and per-instruction stall samples (source pages as CSV). Also a variant tree
# (.ab/unordered192) whose deterministic=False calls at 192 run unordered (the bindings without
# bwd_orders_both_modes), to re-measure item 47's rule on today's 192 kernel ("dash" column).
START=$(date +%s)
export CC=/usr/bin/gcc CXX=/usr/bin/g++ CUTLASS_PATH=$PWD/.site/cutlass/include PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
export DASH_INSTANTIATIONS='bwd_hdim192_bf16_full,bwd_hdim192_bf16_band,fwd_hdim192_bf16_*'
t() { echo "t=$(( $(date +%s)-START ))s"; }
rm -rf build dash/_C.abi3.so .ab/unordered192 && mkdir -p .ab/unordered192 && cp -r csrc setup.py dash tools bench tests Makefile .ab/unordered192/
sed -i 's/p.deterministic = deterministic || bwd_orders_both_modes(p.head_dim, p.head_dim_v);/p.deterministic = deterministic;/' .ab/unordered192/csrc/binding/attn_bwd_op.cpp
grep -c "p.deterministic = deterministic;" .ab/unordered192/csrc/binding/attn_bwd_op.cpp
(cd .ab/unordered192 && MAX_JOBS=8 python3 setup.py build_ext --inplace > $OUT/build_u.log 2>&1; echo "u build rc=$?") &
MAX_JOBS=8 python3 setup.py build_ext --inplace > $OUT/build.log 2>&1; echo "build rc=$? $(t)"; wait
FA3PATH=$PWD/.ab/fa3_192
PYTHONPATH=$FA3PATH python3 bench/bench_bwd.py --hdim 192 --seqlen 4096 16384 --mask full causal \
  --impl dash_det dash fa3_det fa3 --warm-s 1 --min-s 0.5 > $OUT/bench.txt 2>&1; echo "bench rc=$? $(t)"; grep -E "^ +192 " $OUT/bench.txt
(cd .ab/unordered192 && python3 bench/bench_bwd.py --hdim 192 --seqlen 4096 16384 --mask full causal \
  --impl dash_det dash --warm-s 1 --min-s 0.5 > $OUT/bench_u.txt 2>&1; echo "bench u rc=$? $(t)"; grep -E "^ +192 " $OUT/bench_u.txt)
SEC="--section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section WarpStateStats --section LaunchStats --section Occupancy --section SchedulerStats --section InstructionStats"
for shape in "--causal" ""; do
  tag=$([ -n "$shape" ] && echo causal || echo full)
  timeout 120 ncu --clock-control none --profile-from-start off -k regex:attn_bwd_sm90 $SEC python3 tools/profile_bwd.py --hdim 192 $shape --deterministic > $OUT/ncu_dash_$tag.txt 2>&1
  PYTHONPATH=$FA3PATH timeout 120 ncu --clock-control none --profile-from-start off --kernel-name-base demangled -k regex:FlashAttnBwd $SEC python3 tools/profile_bwd.py --impl fa3 --hdim 192 $shape > $OUT/ncu_fa3_$tag.txt 2>&1
  echo "ncu $tag $(t)"; grep -E " Duration|Issue Slots Busy|No Eligible|Registers Per" $OUT/ncu_dash_$tag.txt $OUT/ncu_fa3_$tag.txt
done
timeout 120 ncu --clock-control none --profile-from-start off -k regex:attn_bwd_sm90 --section SourceCounters --section WarpStateStats --import-source no -o $OUT/src_dash python3 tools/profile_bwd.py --hdim 192 --causal --deterministic > $OUT/ncu_src_dash.log 2>&1
PYTHONPATH=$FA3PATH timeout 120 ncu --clock-control none --profile-from-start off --kernel-name-base demangled -k regex:FlashAttnBwd --section SourceCounters --section WarpStateStats --import-source no -o $OUT/src_fa3 python3 tools/profile_bwd.py --impl fa3 --hdim 192 --causal > $OUT/ncu_src_fa3.log 2>&1
echo "src $(t)"
for x in dash fa3; do ncu --import $OUT/src_$x.ncu-rep --page source --csv --print-source sass > $OUT/src_$x.csv 2> $OUT/src_$x.err; done
cd $OUT && gzip -f src_*.csv && rm -f *.ncu-rep && tar czf logs.tgz *.txt *.log *.err && rm -f *.txt *.log *.err; ls -la; echo "done $(t)"
