#!/bin/bash
# Session 26, eighth call: item 205, an upper bound for item 202's instruction-fetch lead. `nocap`
# (hdim 128 bf16 forward units built without the softcapped walk, fwd_no_softcap_walk.patch: the
# plain walk's code sits next to the tile start and the epilogue; softcap calls are wrong in it, a
# measurement only) against `s26`, then one Nsight launch of nocap at 4k causal (job_e's metrics).
# Prediction: hdim 128 causal +1-2% at 2k-4k, +0.5% at 8k, full within noise; "no instruction"
# stall samples in the per-tile code down toward FA3's (238 vs dash's 1,075 at 4k).
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT/ncu
export PYTHONUNBUFFERED=1
LIBS='.ab/libs/s26.so.gz .ab/libs/nocap.so.gz' SASS=0 ROUNDS=2 \
BENCH='bench/bench_fwd.py --hdims 128 --seqlens 2048 4096 8192 --masks causal --impls dash --warm-s 1 --min-s 0.5 --out /tmp/bf;;bench/bench_fwd.py --hdims 128 --seqlens 4096 --masks full --impls dash --warm-s 1 --min-s 0.5 --out /tmp/bf' \
  OUT=$OUT/ab bash bench/ab_job.sh
echo "A/B done at $(t)"
gunzip -c .ab/libs/nocap.so.gz > dash/_C.abi3.so
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
name=nocap_4096_causal
timeout 60 $NCU --clock-control none --kernel-name-base demangled --kernel-name regex:"attn_fwd_sm90_kernel" \
  --launch-skip 5 --launch-count 1 --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
  --section SourceCounters --metrics sm__cycles_active.avg,smsp__inst_executed.sum \
  --import-source no -o /tmp/rep_$name -f python3 bench/results/2026-11-29-s25/ncu_fwd_one.py dash 128 4096 causal > $OUT/ncu/ncu_$name.log 2>&1
$NCU -i /tmp/rep_$name.ncu-rep --page details --csv > $OUT/ncu/details_$name.csv 2>> $OUT/ncu/ncu_$name.log
$NCU -i /tmp/rep_$name.ncu-rep --page source --csv --print-source sass > /tmp/src_$name.csv 2>> $OUT/ncu/ncu_$name.log
gzip -c /tmp/src_$name.csv > $OUT/ncu/src_$name.csv.gz
grep -E '"(Duration|SM Active Cycles|Issue Slots Busy|Eligible Warps Per Scheduler)"' $OUT/ncu/details_$name.csv | awk -F'","' '{print $(NF-2)" = "$NF}' | sort -u
(cd $OUT/ncu && tar czf ../ncu.tgz ./*) && rm -rf $OUT/ncu
echo "done at $(t)"
