#!/bin/bash
# Issue 15's GQA and packed-mix rows on the final library beside FA3 (carry .ab/libs with
# head.so.gz, .ab/fa3): Llama-3-8B's attention (32 / 8 heads, hdim 128, hidden 4096) and the
# long / short packed-document mixes (MHA 16 heads and GQA 32 / 8).
gunzip -c .ab/libs/head.so.gz > dash/_C.abi3.so
export PYTHONPATH=$PWD/.ab/fa3:${PYTHONPATH:-}
B="--warm-s 1 --min-s 0.5"
mkdir -p $OUT
timeout 150 python3 bench/bench_bwd.py --hdim 128 --hidden 4096 --heads-kv 8 --seqlen 4096 16384 --mask full causal \
  --impl dash_det dash fa3_det fa3 $B --out $OUT/gqa > $OUT/gqa_fa3.txt 2>&1; tail -6 $OUT/gqa_fa3.txt
timeout 90 python3 bench/bench_varlen.py --hdim 128 --mix long short --impl dash_det dash fa3_det fa3 $B > $OUT/varlen_fa3.txt 2>&1; tail -4 $OUT/varlen_fa3.txt
timeout 90 python3 bench/bench_varlen.py --hdim 128 --heads 32 --heads-kv 8 --mix long short --impl dash_det dash fa3_det fa3 $B \
  > $OUT/varlen_gqa_fa3.txt 2>&1; tail -4 $OUT/varlen_gqa_fa3.txt
