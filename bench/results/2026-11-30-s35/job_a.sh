#!/bin/bash
# Call 1 (session 35): session 34's pending GPU check of the review-mended tests/test_long_sequences.py and
# tests/test_softcap.py on ci33 (CI's build of dcfa64f: HEAD's kernels). Carry .ab/libs/ci33.so.gz.
# (STRESS_MAX_S was not set, so the stress run took the call's remaining 251 s.)
gunzip -c .ab/libs/ci33.so.gz > dash/_C.abi3.so
FILES="test_long_sequences test_softcap" SASS=0 DEADLINE=300 OUT=$OUT bash tools/gpu_test_job.sh
