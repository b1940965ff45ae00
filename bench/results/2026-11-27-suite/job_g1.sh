#!/bin/bash
# The whole library built on the GPU machine from HEAD (setup.py's libstdc++ link and check;
# by_keys at 96 and in the softcap kernels), check_sass, then the test files that cover the
# changed kernels and the errors that crashed on 2026-11-27's first build. Carry .site. The
# library comes back as head.so.gz (keep it in .ab/libs/ for job_g2.sh).
START=$(date +%s)
OUT=$OUT bash tools/gpu_build_library.sh || { tail -20 $OUT/build.log; exit 1; }
FILES="test_library_errors test_softcap test_head_dims test_bwd_correctness test_determinism test_invariance test_deadlock" \
DEADLINE=$(( 585 - ($(date +%s) - START) )) OUT=$OUT bash tools/gpu_test_job.sh
echo "done at $(( $(date +%s) - START ))s"
