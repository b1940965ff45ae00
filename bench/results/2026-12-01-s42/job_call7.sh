#!/bin/bash
# Session 42, call 7 (land41): (1) issue 13's det / non-det bar at 192 and 192 x 128 causal 8k / 16k, where today's
# single processes read 0.922-0.957: three processes, det first in one, non-det first in the others; (2) Nsight
# Compute of 192's full-mask 16k backward, det and non-det (the 4% that the chain costs there, item 297).
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT/ncu
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/land41.so.gz > dash/_C.abi3.so
B="--mask causal --seqlen 8192 16384 --warm-s 1 --min-s 0.5 --out $OUT/x"
python3 bench/bench_bwd.py --hdim 192 192x128 $B --impl dash_det dash > $OUT/p1.txt 2>&1
python3 bench/bench_bwd.py --hdim 192 192x128 $B --impl dash dash_det > $OUT/p2.txt 2>&1
python3 bench/bench_bwd.py --hdim 192 192x128 $B --impl dash dash_det > $OUT/p3.txt 2>&1
echo "bench at $(t)"; grep -h "causal" $OUT/p[123].txt | grep -v model
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
for mode in det nondet; do
  name=dash_192f_$mode; flag=""; [ $mode = det ] && flag="--deterministic"
  timeout 80 $NCU --clock-control none --profile-from-start off --kernel-name-base demangled -k "regex:attn_bwd_sm90" \
    --launch-count 1 --section WarpStateStats --section SourceCounters --section SpeedOfLight \
    --import-source no -o /tmp/rep_$name -f python3 tools/profile_bwd.py --hdim 192 --seqlen 16384 $flag > $OUT/ncu/ncu_$name.log 2>&1
  echo "ncu $name rc=$? at $(t)"
  $NCU -i /tmp/rep_$name.ncu-rep --page source --csv --print-source sass > /tmp/src_$name.csv 2>> $OUT/ncu/ncu_$name.log
  $NCU -i /tmp/rep_$name.ncu-rep --page details --csv > $OUT/ncu/details_$name.csv 2>> $OUT/ncu/ncu_$name.log
  gzip -c /tmp/src_$name.csv > $OUT/ncu/src_$name.csv.gz
done
(cd $OUT/ncu && tar czf ../ncu.tgz ./*) && rm -rf $OUT/ncu $OUT/x
echo "done at $(t)"
