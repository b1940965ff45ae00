#!/bin/bash
# (0) mutation check: the late-dO-stream cases on a library without the task_read wait (expect stalls: rc 137);
# (1) forward A/B at the two-warpgroup head dims other than 128: O rescale before P V (fwd_fix) against HEAD's
#     order (fwd_head), bf16 forward-only libraries built locally, alternately, two rounds;
# (2) backward A/B, hdim 64 / 128 det: HEAD (bwd_head, local build of 4 units) against the fix's library (lib_fix);
# (3) with lib_fix: the gloo ranks-sharing-one-GPU tests and two torchrun --nproc-per-node 2 --backend gloo runs
#     of the CP example per mode (bits compared).
START=$(date +%s)
export PYTHONUNBUFFERED=1
el() { echo "$(( $(date +%s)-START ))s"; }
gunzip -c .ab/libs/mut.so.gz > dash/_C.abi3.so
for c in packed_small window; do
  PYTHONPATH=$PWD/tests:$PWD timeout -s KILL 25 python3 tests/lagged_do_stream.py $c 20000 5 > $OUT/mut_$c.txt 2>&1; echo "mutation $c rc=$? at $(el): $(tail -1 $OUT/mut_$c.txt)"
done
B='bench/bench_fwd.py --hdims 96 192 192x128 256 --seqlens 4096 16384 --masks full causal --impls dash --warm-s 1 --min-s 0.5'
BB='bench/bench_bwd.py --hdim 64 128 --seqlen 4096 16384 --mask full causal --impl dash_det --warm-s 1 --min-s 0.5'
for round in 1 2; do
  for side in fwd_head fwd_fix; do
    gunzip -c .ab/libs/$side.so.gz > dash/_C.abi3.so
    timeout 120 python3 $B > $OUT/fwd_${side}_$round.txt 2>&1
    echo "== $side round $round at $(el): $(grep -E '^\| (96|192|256)' $OUT/fwd_${side}_$round.txt | tr -s ' ' | tr '\n' ';')"
  done
  for side in bwd_head lib_fix; do
    gunzip -c .ab/libs/$side.so.gz > dash/_C.abi3.so
    timeout 100 python3 $BB > $OUT/bwd_${side}_$round.txt 2>&1
    echo "== $side round $round at $(el): $(grep -E '^ *(64|128) ' $OUT/bwd_${side}_$round.txt | tr -s ' ' | tr '\n' ';')"
  done
done
gunzip -c .ab/libs/lib_fix.so.gz > dash/_C.abi3.so
timeout -s KILL 150 python3 -m pytest -q -p no:cacheprovider tests/test_distributed_gpu.py > $OUT/dist.txt 2>&1; echo "dist rc=$?: $(tail -1 $OUT/dist.txt) at $(el)"
for run in 1 2; do
  for cp in ulysses ring; do
    timeout -s KILL 60 torchrun --standalone --nproc-per-node 2 examples/train_gpt_cp.py --backend gloo --cp $cp --deterministic --steps 20 --seqlen 1024 --layers 2 --out $OUT/cp_${cp}_$run > $OUT/cp_${cp}_$run.txt 2>&1
    echo "cp $cp run $run rc=$? at $(el): $(tail -1 $OUT/cp_${cp}_$run.txt)"
  done
done
cd $OUT && tar czf logs.tgz *.txt cp_* && rm -rf *.txt cp_*
