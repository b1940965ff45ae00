#!/bin/bash
# A/B of two source trees on the GPU machine, in one job: the working tree ("a", usually HEAD)
# and a variant tree ("b": a copy with the change, e.g. made with
#   mkdir .ab/x && git archive HEAD | tar -x -C .ab/x   and then edited).
# Both are built side by side with only the compared instantiations, the variant's SASS is
# checked, optional tests run on the variant, then the benchmark runs on a and b alternately
# (a, b, a, b, ...), each in its own process, so both see the same machine state
# (bench/RESULTS.md's steady-state method: pass --warm-s / --min-s in BENCH).
#
#   VARIANT=.ab/x UNITS='bwd_hdim128_bf16_full,bwd_hdim128_bf16_band,fwd_hdim128_bf16_*' \
#   BENCH='bench/bench_bwd.py --hdim 128 --seqlen 4096 16384 --mask full causal --impl dash_det --warm-s 1 --min-s 0.5' \
#   TESTS='tests/test_bwd_correctness.py tests/test_determinism.py -k "128 and not float16"' ROUNDS=2 \
#   bash bench/ab_job.sh
#
# Or PATCH=<file> instead of VARIANT: the variant tree is made here, a copy of the working tree's
# sources (csrc setup.py dash tools bench tests Makefile README.md) in .ab/patched with the patch
# applied (patch -p1), so a job needs to carry only .site.
#
# Or, with LIBS='a.so.gz b.so.gz [c.so.gz ...]' (libraries built beforehand, e.g. on the CI machine
# with DASH_INSTANTIATIONS, gzip'd and carried), no build: each side is one library (named by its
# file, e.g. "b" for b.so.gz), swapped into the working tree's dash/ in turn for each round
# (VARIANT and UNITS are then not needed; TESTS run on the last side).
#
# SIDE_ENV_<side>: environment assignments for that side's benchmark runs only (e.g.
# SIDE_ENV_b='DASH_SOME_SWITCH=1', or the same library carried under two names with a switch on one).
#
# TESTS_TIMEOUT: seconds for the TESTS run (default 150).
#
# SASS=0 skips tools/check_sass.py (about 2 minutes for a whole library; for libraries already
# checked).
#
# BENCH may hold several commands separated by ";;" (e.g. the same grid plain and with --softcap 30):
# each round runs every command on every side in turn.
#
# Writes under $OUT: build logs, sass_<side>.txt, tests_<side>.txt, bench<k>_<side>_<round>.txt,
# summary.txt (bench/ab_summary.py: each row's mean per side and its change against the first
# side), all in one logs.tgz (the device returns at most 8 files). CUTLASS headers: .site/cutlass
# (carried) or CUTLASS_PATH.
set -u
START=$(date +%s)
: "${BENCH:?BENCH: the benchmark command}"
LIBS=${LIBS:-}
ROUNDS=${ROUNDS:-2}
TESTS=${TESTS:-}
OUT=${OUT:-/tmp/ab_out}
mkdir -p "$OUT"
PATCH=${PATCH:-}
if [ -z "$LIBS" ] && [ -n "$PATCH" ] && [ -z "${VARIANT:-}" ]; then
  VARIANT=.ab/patched
  rm -rf "$VARIANT" && mkdir -p "$VARIANT" && cp -r csrc setup.py dash tools bench tests Makefile README.md "$VARIANT/" &&
    patch -p1 -d "$VARIANT" < "$PATCH" > "$OUT/patch.log" 2>&1 || { echo "PATCH $PATCH does not apply"; cat "$OUT/patch.log"; exit 1; }
fi
if [ -z "$LIBS" ]; then : "${VARIANT:?VARIANT: the variant tree}" "${UNITS:?UNITS: DASH_INSTANTIATIONS of both builds}"; fi
ROOT=$PWD
export CC=${CC:-/usr/bin/gcc} CXX=${CXX:-/usr/bin/g++} PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
export CUTLASS_PATH=${CUTLASS_PATH:-$ROOT/.site/cutlass/include}
elapsed() { echo "$(( $(date +%s) - START ))s"; }
# The sides: a and b (source trees), or one per library.
if [ -n "$LIBS" ]; then
  SIDES=$(for lib in $LIBS; do basename "$lib" .so.gz; done)
else
  SIDES="a b"
fi
LAST_SIDE=$(echo $SIDES | awk '{print $NF}')
# side_dir <side>: the tree that runs that side (LIBS: the working tree, with the side's library in place).
side_dir() {
  if [ -n "$LIBS" ]; then
    for lib in $LIBS; do
      if [ "$(basename "$lib" .so.gz)" = "$1" ]; then gunzip -c "$lib" > "$ROOT/dash/_C.abi3.so"; fi
    done
    echo "$ROOT"
  elif [ "$1" = a ]; then echo "$ROOT"; else echo "$VARIANT"; fi
}

if [ -z "$LIBS" ]; then
  export DASH_INSTANTIATIONS="$UNITS"
  rm -rf build dash/_C.abi3.so "$VARIANT/build" "$VARIANT/dash/_C.abi3.so"
  (cd "$VARIANT" && MAX_JOBS=8 python3 setup.py build_ext --inplace > "$OUT/build_b.log" 2>&1; echo "b build rc=$?") &
  MAX_JOBS=8 python3 setup.py build_ext --inplace > "$OUT/build_a.log" 2>&1; echo "a build rc=$? at $(elapsed)"
  wait
fi
for side in $SIDES; do
  dir=$(side_dir $side)
  if [ "${SASS:-1}" = 0 ]; then echo "sass $side: not checked (SASS=0)"; continue; fi
  (cd "$dir" && python3 "$ROOT/tools/check_sass.py" dash/_C.abi3.so > "$OUT/sass_$side.txt" 2>&1)
  echo "sass $side: $(grep -c ' ok$' "$OUT/sass_$side.txt") ok, $(grep -c 'FAIL' "$OUT/sass_$side.txt") FAIL"
done
if [ -n "$TESTS" ]; then
  dir=$(side_dir $LAST_SIDE)
  (cd "$dir" && eval timeout "${TESTS_TIMEOUT:-150}" python3 -m pytest -q -p no:cacheprovider $TESTS > "$OUT/tests_$LAST_SIDE.txt" 2>&1
   echo "$LAST_SIDE tests rc=$?: $(tail -1 "$OUT/tests_$LAST_SIDE.txt") at $(elapsed)")
fi
IFS=$'\n' read -r -d '' -a BENCHES < <(echo "$BENCH" | awk 'BEGIN{RS=";;"} {gsub(/^[ \t\n]+|[ \t\n]+$/, ""); if (length) print}'; printf '\0')
for round in $(seq 1 "$ROUNDS"); do
  for k in "${!BENCHES[@]}"; do
    for side in $SIDES; do
      dir=$(side_dir $side)
      out="$OUT/bench$((k + 1))_${side}_$round.txt"
      side_env="SIDE_ENV_$side"
      (cd "$dir" && eval env ${!side_env:-} timeout 150 python3 ${BENCHES[$k]} > "$out" 2>&1)
      echo "== bench $((k + 1)) $side round $round at $(elapsed)"
      grep -E "^ *[0-9x]+ +[0-9]+ |^\| *[0-9x]+ \|" "$out" | tr -s ' ' | tr '\n' ';'; echo
    done
  done
done
python3 "$ROOT/bench/ab_summary.py" "$OUT" $SIDES | tee "$OUT/summary.txt"
(cd "$OUT" && tar czf logs.tgz $(ls ./*.txt ./*.log 2>/dev/null) && rm -f ./*.txt ./*.log)
