#!/bin/bash
# Issue 13: softcap cost, window vs Flex (second round), Flex on the rows job 4 lost to dynamo's recompile limit.
START=$(date +%s)
for cap in 0 30; do
python3 bench/bench_bwd.py --hdim 64 128 --seqlen 4096 16384 --mask full causal --impl dash_det dash --softcap $cap --out $OUT/cap$cap > $OUT/cap$cap.txt 2>&1
grep -E "^ +[0-9x]+ +[0-9]+ " $OUT/cap$cap.txt; echo "cap $cap t=$(( $(date +%s)-START ))s"
done
python3 bench/bench_bwd.py --hdim 128 64 --seqlen 16384 32768 --mask causal --window 4096 --total-tokens 32768 --impl flex dash_det dash --out $OUT/win > $OUT/win.txt 2>&1
grep -E "^ +[0-9x]+ +[0-9]+ " $OUT/win.txt; echo "t=$(( $(date +%s)-START ))s"
python3 bench/bench_bwd.py --hdim 128 64 --seqlen 2048 4096 8192 16384 --mask causal full --impl flex --out $OUT/flex > $OUT/flex.txt 2>&1
grep -E "^ +[0-9x]+ +[0-9]+ " $OUT/flex.txt; echo "t=$(( $(date +%s)-START ))s"
for cap in 0 30; do
python3 bench/bench_fwd.py --hdims 64 128 --seqlens 4096 16384 --masks full causal --impls dash --softcap $cap --out $OUT/fcap$cap > $OUT/fcap$cap.txt 2>&1
tail -9 $OUT/fcap$cap.txt; echo "fwd cap $cap t=$(( $(date +%s)-START ))s"
done
