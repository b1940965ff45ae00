#!/bin/bash
# A library's release checks on the GPU machine, in one device call with a time budget:
# tools/check_sass.py, each GPU test file in turn (the ones that only run with a Hopper GPU, most
# relevant first), then tools/stress_calls.py with what time is left. Logs under $OUT (one
# logs.tgz). Run from the repository root with the library to check in dash/:
#   DEADLINE=480 OUT=/tmp/out bash tools/gpu_test_job.sh
# A test file that would start with under 20 s left is skipped and said so. STRESS_MAX_S caps the
# stress run (default: all the time left; with FILES given, a subset of the files, no stress run
# unless STRESS_MAX_S is set). SASS=0 skips check_sass (about 2 minutes; for a library
# checked elsewhere, e.g. on the CI machine, which has cuobjdump).
START=$(date +%s); DEADLINE=${DEADLINE:-540}; OUT=${OUT:-/tmp/gpu_test_job}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
elapsed() { echo "$(( $(date +%s) - START ))s"; }
if [ -n "${FILES:-}" ] && [ -z "${STRESS_MAX_S:-}" ]; then STRESS_MAX_S=0; fi
FILES=${FILES:-"test_fwd test_head_dims test_varlen test_window test_softcap test_gqa test_determinism test_deadlock
  test_bwd_correctness test_invariance test_long_sequences test_flash_attn_interface_gpu test_gemma2_gpu test_torch_attention_integration
  test_transformers_integration test_distributed_gpu"}
if [ "${SASS:-1}" != 0 ]; then
  python3 tools/check_sass.py dash/_C.abi3.so > "$OUT/sass.txt" 2>&1
  echo "check_sass rc=$?: $(grep -c ' ok$' "$OUT/sass.txt") ok, $(grep -c FAIL "$OUT/sass.txt") FAIL"
fi
for t in $FILES; do
  left=$(( DEADLINE - 50 - ($(date +%s) - START) ))
  if [ $left -lt 20 ]; then echo "SKIP $t (no time)"; continue; fi
  timeout -s KILL $left python3 -m pytest -q -p no:cacheprovider "tests/$t.py" > "$OUT/$t.txt" 2>&1
  echo "$t rc=$? at $(elapsed): $(grep -E 'passed|failed|error' "$OUT/$t.txt" | tail -1)"
done
left=$(( DEADLINE - ($(date +%s) - START) ))
[ -n "${STRESS_MAX_S:-}" ] && [ $left -gt $(( STRESS_MAX_S + 15 )) ] && left=$(( STRESS_MAX_S + 15 ))
if [ $left -gt 25 ] && [ "${STRESS_MAX_S:-}" != 0 ]; then
  timeout -s KILL $left python3 tools/stress_calls.py $(( left - 15 )) > "$OUT/stress.txt" 2>&1
  echo "stress rc=$?: $(tail -1 "$OUT/stress.txt")"
fi
(cd "$OUT" && tar czf logs.tgz ./*.txt && rm -f ./*.txt)
