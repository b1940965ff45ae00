#!/bin/bash
# Item 209's lead: the packed short mix's forward has 4.6x FA3's "no instruction" stalls (dash's band
# kernel 10,320 static instructions, FA3's 4,024). A/B main against nocap (item 205's variant: hdim
# 128 bf16 forward units compiled without the softcapped walk, 6,176 instructions) on the packed
# mixes' forward, MHA and GQA, two rounds. Prediction: short mix +1-3%, long mix within 1%.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
W="--warm-s 1 --min-s 0.5"
B="bench/bench_varlen.py --pass fwd --impl dash $W;;bench/bench_varlen.py --pass fwd --heads 32 --heads-kv 8 --impl dash $W"
LIBS='.ab/libs/main.so.gz .ab/libs/nocap.so.gz' BENCH="$B" ROUNDS=2 SASS=0 OUT=$OUT/ab bash bench/ab_job.sh 2>&1 | tail -12
