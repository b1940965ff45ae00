#!/bin/bash
# Final forward tables: dash (final library) beside FlashAttention-3, hdim 128 / 64, 2k-16k; hdim 64 against
# HEAD's forward units (its step is HEAD's); the other head dims' forward and softcap 30 at 128 / 64.
START=$(date +%s)
export PYTHONUNBUFFERED=1
el() { echo "$(( $(date +%s)-START ))s"; }
gunzip -c .ab/libs/final3.so.gz > dash/_C.abi3.so
PYTHONPATH=$PWD/.ab/fa3:$PWD timeout 200 python3 bench/bench_fwd.py --hdims 128 64 --seqlens 2048 4096 8192 16384 --masks full causal --impls dash fa3 --warm-s 1 --min-s 0.5 > $OUT/fwd_fa3.txt 2>&1
echo "fwd vs fa3 rc=$? at $(el)"; grep -E '^\| (64|128) ' $OUT/fwd_fa3.txt
for round in 1 2; do
  for side in fwdA final3; do
    gunzip -c .ab/libs/$side.so.gz > dash/_C.abi3.so
    timeout 100 python3 bench/bench_fwd.py --hdims 64 --seqlens 4096 16384 --masks full causal --impls dash --warm-s 1 --min-s 0.5 > $OUT/h64_${side}_$round.txt 2>&1
    echo "== h64 $side r$round $(el): $(grep -E '^\| [0-9x]+ ' $OUT/h64_${side}_$round.txt | awk -F'|' '{print $2 $3 $4 $5}' | tr -s ' ' | tr '\n' ';')"
  done
done
gunzip -c .ab/libs/final3.so.gz > dash/_C.abi3.so
timeout 150 python3 bench/bench_fwd.py --hdims 96 192 192x128 256 --seqlens 2048 4096 8192 16384 --masks full causal --impls dash cudnn --warm-s 1 --min-s 0.5 > $OUT/fwd_other.txt 2>&1
echo "fwd other rc=$? at $(el)"; grep -E '^\| [0-9x]+ ' $OUT/fwd_other.txt
cd $OUT && tar czf logs.tgz *.txt && rm -f *.txt
