#!/bin/bash
# Session 36, calls 9 and 10 (device time left over): q2full (exp/fwd-q2, every unit) through the GPU test
# files that exercise the forward most. Carry .ab/libs/q2full.so.gz.
gunzip -c .ab/libs/q2full.so.gz > dash/_C.abi3.so
# call 9:
FILES="test_fwd test_varlen test_window test_head_dims" SASS=0 DEADLINE=165 OUT=$OUT/t bash tools/gpu_test_job.sh
# call 10 (its last three files did not start: no time):
FILES="test_softcap test_gqa test_invariance test_flash_attn_interface_gpu test_determinism test_deadlock test_long_sequences" SASS=0 DEADLINE=125 OUT=$OUT/t2 bash tools/gpu_test_job.sh
