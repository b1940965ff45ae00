#!/bin/bash
# The library job_v1.sh built (carried back as .ab/libs/head_f4fe342.so.gz), checked on the GPU:
gunzip -c .ab/libs/head_f4fe342.so.gz > dash/_C.abi3.so && FILES="test_fwd test_head_dims test_softcap test_window test_gqa test_varlen test_determinism" DEADLINE=330 OUT=$OUT bash tools/gpu_test_job.sh
