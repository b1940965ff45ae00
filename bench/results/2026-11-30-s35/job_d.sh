#!/bin/bash
# Call 4 (session 35): the whole library with the late tile draw (fdfull: exp/fwd-draw-late, every unit),
# (1) Nsight Compute of one causal forward launch, dash and FA3 0251105a (.ab/fa3v), at hdim 128 2k
# (16 heads x 8) and 4 heads at 32k: active against elapsed cycles (the launch's tail), as item 248;
# (2) the GPU test files that run the forward (tools/gpu_test_job.sh), then a short stress run.
# Carry .ab/libs/fdfull.so.gz and .ab/fa3v.
# Prediction: at 4 heads 32k dash's elapsed past the mean SM's active time falls from 5.0% toward FA3's
# 2.5%; at 2k the tail is small either way (item 252: 1.5% idle) and the ~4% gap sits in the SMs' active
# cycles (per-tile costs). Tests: all pass.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
gunzip -c .ab/libs/fdfull.so.gz > dash/_C.abi3.so
M=gpu__time_duration.sum,sm__cycles_active.avg,sm__cycles_active.max,sm__cycles_elapsed.max,sm__inst_executed.sum
P=bench/results/2026-11-30-s34/prof_fwd.py
for s in "2048 16 8" "32768 4 1"; do
  tag=$(echo $s | tr ' ' _)
  PYTHONPATH=$PWD timeout 90 ncu --clock-control none --profile-from-start off -k regex:attn_fwd --metrics $M \
    python3 $P dash $s > $OUT/ncu_dash_$tag.txt 2>&1
  PYTHONPATH=$PWD:$PWD/.ab/fa3v timeout 90 ncu --clock-control none --profile-from-start off --kernel-name-base demangled -k regex:FlashAttnFwd --metrics $M \
    python3 $P fa3 $s > $OUT/ncu_fa3_$tag.txt 2>&1
  for f in $OUT/ncu_dash_$tag.txt $OUT/ncu_fa3_$tag.txt; do echo "== $(basename $f)"; grep -E "gpu__time|sm__cycles|inst_executed|Error" $f | head -8; done
done
echo "ncu done at $(t)"
# (3) hdim 128 causal 2k / 4k, dash and FA3 each in its own process, alternating, three rounds (the
# ratio's spread between processes at 2k is 2-3%, item 253).
for r in 1 2 3; do
  for impl in dash fa3; do
    PYTHONPATH=$PWD/.ab/fa3v timeout 60 python3 bench/bench_fwd.py --warm-s 1 --min-s 0.5 --hdims 128 --seqlens 2048 4096 \
      --masks causal --impls $impl > $OUT/alt_${impl}_$r.txt 2>&1
    echo "alt $impl $r: $(grep -E '^\| 128' $OUT/alt_${impl}_$r.txt | tr -s ' ' | tr '\n' ';')"
  done
done
echo "alternation done at $(t)"
FILES="test_fwd test_varlen test_window test_softcap test_head_dims test_gqa test_invariance test_long_sequences test_flash_attn_interface_gpu" \
  SASS=0 STRESS_MAX_S=40 DEADLINE=$(( 560 - $(date +%s) + START )) OUT=$OUT/tests bash tools/gpu_test_job.sh
