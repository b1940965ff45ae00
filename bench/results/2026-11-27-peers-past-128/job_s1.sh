#!/bin/bash
# Issue 15 / 13: the backward past hdim 128 on the final library (bd04191's kernels, built by .ci/run)
# beside FlashAttention-3 (192: .ab/fa3_192; 256: .ab/fa3_256, non-det only, FA3 refuses det at
# 256) and cuDNN, steady state, 2k-16k, both masks; then Nsight Compute stall samples of the 192
# causal 16k kernel, det and non-det (unordered since item 139), to see what the order adds
# (item 137's dO wait: 10.4% of samples against FA3's 1.6%).
START=$(date +%s)
export PYTHONUNBUFFERED=1 PATH=$PATH:/usr/local/cuda/bin
t() { echo "t=$(( $(date +%s)-START ))s"; }
gunzip -c .ab/libs/final.so.gz > dash/_C.abi3.so
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
B="--seqlen 2048 4096 8192 16384 --mask full causal --warm-s 1 --min-s 0.5"
PYTHONPATH=$PWD/.ab/fa3_192 timeout 200 python3 bench/bench_bwd.py --hdim 192 $B --impl dash_det dash fa3_det fa3 cudnn > $OUT/bench_192.txt 2>&1; echo "192 rc=$? $(t)"
PYTHONPATH=$PWD/.ab/fa3_256 timeout 150 python3 bench/bench_bwd.py --hdim 256 $B --impl dash_det fa3 cudnn > $OUT/bench_256.txt 2>&1; echo "256 rc=$? $(t)"
timeout 120 python3 bench/bench_bwd.py --hdim 192x128 $B --impl dash_det dash cudnn > $OUT/bench_192x128.txt 2>&1; echo "192x128 rc=$? $(t)"
grep -E "^ +(192|256)" $OUT/bench_*.txt
for mode in "--deterministic" ""; do
  tag=$([ -n "$mode" ] && echo det || echo nondet)
  timeout 100 ncu --clock-control none --profile-from-start off -k regex:attn_bwd_sm90 --section SpeedOfLight --section SourceCounters --section WarpStateStats --import-source no -o $OUT/src_$tag python3 tools/profile_bwd.py --hdim 192 --causal $mode > $OUT/ncu_$tag.log 2>&1
  ncu --import $OUT/src_$tag.ncu-rep --page source --csv --print-source sass > $OUT/src_$tag.csv 2> $OUT/src_$tag.err
  ncu --import $OUT/src_$tag.ncu-rep --page details > $OUT/details_$tag.txt 2>&1
  echo "ncu $tag $(t)"; grep -E "Duration|Elapsed Cycles" $OUT/details_$tag.txt
done
cd $OUT && gzip -f src_*.csv && rm -f *.ncu-rep && tar czf logs.tgz *.txt *.log *.err && rm -f *.log *.err details_*.txt; ls -la; echo "done $(t)"
