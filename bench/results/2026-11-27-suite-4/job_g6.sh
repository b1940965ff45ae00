#!/bin/bash
# The library .ci/run built from 377db07 (counter-dealt deterministic calls launched as usual,
# every item drawn; the chunked dK / dV sum kernel), carried as .ab/libs/final4.so.gz (check_sass
# run on the CI machine: sass_377db07.txt), through every GPU test file (tools/gpu_test_job.sh's
# list plus test_library_errors) and the stress run; then the GQA shape beside FA3, and non-det GQA
# causal with its groups split in 2 / 4 parts (DASH_KV_PARTS).
gunzip -c .ab/libs/final4.so.gz > dash/_C.abi3.so
SASS=0 DEADLINE=${DEADLINE:-440} STRESS_MAX_S=30 \
FILES="test_deadlock test_determinism test_varlen test_window test_invariance test_head_dims test_softcap test_gqa
  test_bwd_correctness test_fwd test_library_errors test_flash_attn_interface_gpu test_gemma2_gpu
  test_torch_attention_integration test_transformers_integration test_distributed_gpu" \
bash tools/gpu_test_job.sh
PYTHONPATH=$PWD/.ab/fa3 timeout 80 python3 bench/bench_bwd.py --hdim 128 --hidden 4096 --heads-kv 8 --seqlen 4096 16384 --mask full causal --impl dash_det dash fa3_det fa3 --warm-s 1 --min-s 0.5 > $OUT/bwd_gqa.txt 2>&1; echo "gqa rc=$?"
for parts in 2 4; do  # the split rule's next lead: non-det GQA causal split too
  DASH_KV_PARTS=$parts timeout 40 python3 bench/bench_bwd.py --hdim 128 --hidden 4096 --heads-kv 8 --seqlen 4096 16384 --mask causal --impl dash --warm-s 1 --min-s 0.5 > $OUT/nondet_parts_$parts.txt 2>&1; echo "parts $parts rc=$?"
done
grep -E "^ +[0-9]+ +[0-9]+ " $OUT/bwd_gqa.txt $OUT/nondet_parts_*.txt
