#!/bin/bash
# Prepared for the next session's first call (not run). Carry .ab/libs/main.so.gz (the CI build of
# session 28's last commit: the fixed-offset softcap kernels), .ab/libs/gqasec.so.gz (built here:
# main + fwd_gqa_sections.patch, hdim 128 bf16 forward units only) and .ab/fa3v (FA3, hdim 64 / 128).
# (1) The rest of the release checks on main: test_head_dims (its packed softcap test now also in
#     bf16, which runs the fixed-offset kernels on packed batches: 8 new cases, not run yet),
#     test_softcap (two 50-repeat bitwise cases added on the fixed-offset kernels, 256 fixed-length and
#     192 packed, not run yet), test_distributed_gpu (87 of 88 ran in session 28 before a call's
#     deadline) and the stress run.
# (2) Issue 15's Llama-3-8B causal forward (0.984x FA3 at 16k): the forward's L2 sections count
#     K/V heads, each with its query heads (fwd_gqa_sections.patch). Today a GQA section holds as
#     many query heads as an MHA one (4 at 16k, hdim 128: one K/V head, 8 of the 32 MB share); FA3
#     multiplies its section by qhead_per_khead (16 query heads at 16k). Only banded calls with
#     heads_kv < heads change (full masks and MHA keep their numbering).
# Prediction: tests pass; GQA causal 8k / 16k +0.5-1.5% (16k to ~0.995-1.0x FA3), 2k / 4k within 0.5%
# (sections there already hold 16-32 of the 32 query heads); full masks and MHA within noise.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/main.so.gz > dash/_C.abi3.so
FILES="test_head_dims test_softcap test_distributed_gpu" SASS=0 DEADLINE=270 STRESS_MAX_S=60 OUT=$OUT/tests bash tools/gpu_test_job.sh
echo "tests done at $(t)"
W="--warm-s 1 --min-s 0.5 --impls dash"
B="bench/bench_fwd.py --hdims 128 --hidden 4096 --heads-kv 8 --seqlens 2048 4096 8192 16384 --masks causal full $W"
B="$B;;bench/bench_fwd.py --hdims 128 --seqlens 4096 16384 --masks causal $W"
LIBS='.ab/libs/main.so.gz .ab/libs/gqasec.so.gz' BENCH="$B" ROUNDS=2 SASS=0 OUT=$OUT/ab bash bench/ab_job.sh 2>&1 | tail -16
echo "ab done at $(t)"
export PYTHONPATH=$PWD/.ab/fa3v
gunzip -c .ab/libs/gqasec.so.gz > dash/_C.abi3.so
timeout 60 python3 bench/bench_fwd.py --hdims 128 --hidden 4096 --heads-kv 8 --seqlens 8192 16384 \
  --masks causal --impls dash fa3 --warm-s 1 --min-s 0.5 > $OUT/fwd_gqa_fa3.txt 2>&1; echo "fa3 rc=$? at $(t)"
grep -E "^\|" $OUT/fwd_gqa_fa3.txt | tail -6
echo "all done at $(t)"
