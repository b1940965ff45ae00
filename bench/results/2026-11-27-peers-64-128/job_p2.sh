#!/bin/bash
# Issue 15's grid on the final library of the fifteenth session (.ci/run's build of 9a53fa8:
# task_ready in every deterministic call), beside FlashAttention-3 (.ab/fa3: hdim 64 / 128 peer)
# and cuDNN, one job: backward hdim 64 / 128 2k-16k both masks, Llama-3-8B's GQA shape, forward.
START=$(date +%s)
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/.ab/fa3
t() { echo "t=$(( $(date +%s)-START ))s"; }
gunzip -c .ab/libs/final2.so.gz > dash/_C.abi3.so
B="--warm-s 1 --min-s 0.5"
timeout 240 python3 bench/bench_bwd.py --hdim 64 128 --seqlen 2048 4096 8192 16384 --mask full causal --impl dash_det dash fa3_det fa3 cudnn $B > $OUT/bwd.txt 2>&1; echo "bwd rc=$? $(t)"
timeout 80 python3 bench/bench_bwd.py --hdim 128 --hidden 4096 --heads-kv 8 --seqlen 4096 16384 --mask full causal --impl dash_det dash fa3_det fa3 $B > $OUT/bwd_gqa.txt 2>&1; echo "gqa rc=$? $(t)"
timeout 150 python3 bench/bench_fwd.py --hdim 64 128 --seqlen 2048 4096 8192 16384 --mask full causal --impl dash fa3 cudnn $B > $OUT/fwd.txt 2>&1; echo "fwd rc=$? $(t)"
grep -E "^ +[0-9]+ +[0-9]+ " $OUT/bwd.txt $OUT/bwd_gqa.txt; grep -E "^\|? *[0-9]+ " $OUT/fwd.txt | head -40
echo "done $(t)"
