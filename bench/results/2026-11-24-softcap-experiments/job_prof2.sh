#!/bin/bash
mkdir -p $OUT
cp .ab/A.so dash/_C.abi3.so
for sc in 0 30; do for hd in 128; do
  timeout 120 ncu --clock-control none --profile-from-start off -k regex:attn_fwd --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio python3 .ab/prof_fwd.py $hd 4096 $sc > /tmp/p2_${hd}_$sc.txt 2>&1
  echo "=== hdim $hd softcap $sc" >> $OUT/prof2.txt
  grep -E "stalled" /tmp/p2_${hd}_$sc.txt | awk '$NF+0 > 0.05' >> $OUT/prof2.txt
done; done
