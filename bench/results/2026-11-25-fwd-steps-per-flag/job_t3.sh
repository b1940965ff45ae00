#!/bin/bash
# Nsight Compute: forward hdim 64 full 4k, A (HEAD) vs B (per-flag steps): stall reasons and per-instruction samples.
START=$(date +%s)
export PYTHONUNBUFFERED=1 PATH=$PATH:/usr/local/cuda/bin
for side in fwdA fwdB; do
  gunzip -c .ab/libs/$side.so.gz > dash/_C.abi3.so
  for hd in 64 128; do
  timeout 150 ncu --clock-control none --profile-from-start off -k regex:attn_fwd_sm90 --section SourceCounters --section WarpStateStats --section SpeedOfLight --section InstructionStats --section SchedulerStats --import-source no -o $OUT/${side}_$hd python3 tools/profile_bwd.py --pass fwd --impl dash --hdim $hd --seqlen 4096 > $OUT/ncu_${side}_$hd.log 2>&1
  echo "ncu $side $hd rc=$? t=$(( $(date +%s)-START ))s"
  ncu --import $OUT/${side}_$hd.ncu-rep --page source --csv --print-source sass > $OUT/src_${side}_$hd.csv 2>/dev/null
  ncu --import $OUT/${side}_$hd.ncu-rep --print-details all > $OUT/details_${side}_$hd.txt 2>/dev/null
  rm -f $OUT/${side}_$hd.ncu-rep
  done
done
cd $OUT && gzip -f src_*.csv && tar czf logs.tgz *.txt *.log src_*.csv.gz && rm -f *.txt *.log src_*.csv.gz; ls -la
