#!/bin/bash
# Item 110: the rest of f40's GPU test files; one round of the three-warpgroup head dims (their
# producer at 32 registers runs the new loop) and hdim 128's softcap kernel (24) against HEAD's
# (base); hdim 256 beside cuDNN (issue 13's 4k full point).
export PYTHONPATH=$PWD
OUT0=$OUT
gunzip -c .ab/f40.so.gz > dash/_C.abi3.so
FILES="test_transformers_integration test_distributed_gpu test_traits" OUT=$OUT0/tests DEADLINE=${DEADLINE:-250} bash tools/gpu_test_job.sh
for side in base f40; do
  gunzip -c .ab/$side.so.gz > dash/_C.abi3.so
  timeout 70 python3 bench/bench_bwd.py --hdim 192 192x128 --seqlen 4096 16384 --mask causal full --impl dash_det --warm-s 1 --min-s 0.5 > $OUT0/hd192_$side.txt 2>&1
  timeout 30 python3 bench/bench_bwd.py --hdim 128 --seqlen 4096 16384 --mask causal --softcap 30 --impl dash_det --warm-s 1 --min-s 0.5 > $OUT0/softcap128_$side.txt 2>&1
  echo "== $side"; grep -hE "^ *[0-9x]+ +[0-9]+ " $OUT0/hd192_$side.txt $OUT0/softcap128_$side.txt | tr -s ' ' | tr '\n' ';'; echo
done
gunzip -c .ab/f40.so.gz > dash/_C.abi3.so
timeout 60 python3 bench/bench_bwd.py --hdim 256 --seqlen 4096 8192 --mask full --impl dash_det dash cudnn --warm-s 1 --min-s 0.5 > $OUT0/bwd256_cudnn.txt 2>&1
tail -6 $OUT0/bwd256_cudnn.txt
