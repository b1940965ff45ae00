#!/bin/bash
# Prepared for the next session (not run): the forward's staged epilogue with every chunk read before any
# store and the stores predicated (branch exp/fwd-epilogue-batched, 7944fc3; next/fwd_epilogue_batched.patch).
# In the landed kernel ptxas reads and stores the 8 chunks of a warpgroup's O slice one by one (each read
# waits behind the previous store, the stores behind their row tests' branches): 169 instructions from the
# slice's barrier to the last store; batched, 82, the 8 LDS.128 back to back, 8 predicated STG.E.128.
# Carry .ab/libs/fdfull.so.gz (HEAD's kernels) and .ab/libs/fepi.so.gz (hdim 128 bf16 forward units only).
# Prediction: +0.3-1% at hdim 128 causal 2k-4k (a few hundred cycles of a tile's ~1,800-cycle excess over
# FA3, item 256), +0.2-0.5% full 2k, nothing from 8k; tests pass (rows past a sequence's end stay unwritten).
LIBS='.ab/libs/fdfull.so.gz .ab/libs/fepi.so.gz' ROUNDS=3 SASS=0 \
  TESTS='tests/test_fwd.py tests/test_varlen.py tests/test_window.py -k "128 and (bf16 or bfloat16)"' TESTS_TIMEOUT=200 \
  BENCH='bench/bench_fwd.py --hdims 128 --seqlens 1024 2048 4096 8192 --masks causal full --impls dash --warm-s 1 --min-s 0.5;;bench/bench_varlen.py --pass fwd --mix long short --impl dash --warm-s 1 --min-s 0.5' \
  OUT=$OUT/ab bash bench/ab_job.sh
