#!/bin/bash
# Call 4 (session 33). Carry .ab/libs/ci33.so.gz (CI's build of dcfa64f, every unit: the final kernels; check_sass
# here: 84 / 84 ok, its report s33's but for hdim 96's four softcap backward lines).
# (1) The GPU files on ci33, the 13 of calls 2 and the three that last ran in session 29 (the PyTorch and HF
#     doors, test_distributed_gpu). Prediction: pass.
# (2) Softcap's cost at hdim 96 in one process each: the backward (det / non-det) and the forward, plain and
#     softcap 30, 2k / 4k / 16k, both masks. Prediction: forward 13-16% (call 2); backward ~10-14% (hdim 128's
#     10-12%, 64's 10-14%; 96 not measured since item 187).
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
gunzip -c .ab/libs/ci33.so.gz > dash/_C.abi3.so
FILES="test_softcap test_head_dims test_fwd test_varlen test_window test_gqa test_invariance test_determinism
  test_bwd_correctness test_traits test_deadlock test_flash_attn_interface_gpu test_gemma2_gpu
  test_torch_attention_integration test_transformers_integration test_distributed_gpu" SASS=0 \
  DEADLINE=390 STRESS_MAX_S=15 OUT=$OUT/tests bash tools/gpu_test_job.sh
echo "tests done at $(t)"
for cap in 0 30; do
  timeout 60 python3 bench/bench_bwd.py --hdim 96 --seqlen 2048 4096 16384 --mask full causal --impl dash_det dash \
    --softcap $cap --warm-s 1 --min-s 0.5 > $OUT/bwd_h96_cap$cap.txt 2>&1
  echo "bwd softcap $cap rc=$? at $(t)"; grep -E "^ +96" $OUT/bwd_h96_cap$cap.txt
done
for cap in 0 30; do
  timeout 30 python3 bench/bench_fwd.py --hdims 96 --seqlens 2048 4096 16384 --masks causal full --impls dash \
    --softcap $cap --warm-s 1 --min-s 0.5 > $OUT/fwd_h96_cap$cap.txt 2>&1
  echo "fwd softcap $cap rc=$? at $(t)"; grep -E "^\| 96" $OUT/fwd_h96_cap$cap.txt
done
echo "all done at $(t)"
