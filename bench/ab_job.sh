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
# Or, with LIBS='a.so.gz b.so.gz' (two libraries built beforehand, e.g. on the CI machine with
# DASH_INSTANTIATIONS, gzip'd and carried), no build: the two are swapped into the working tree's
# dash/ in turn for each round (VARIANT and UNITS are then not needed; TESTS run on b).
#
# Writes under $OUT: build logs, sass_a.txt / sass_b.txt, tests_b.txt, bench_{a,b}_<round>.txt,
# all in one logs.tgz (the device returns at most 8 files). CUTLASS headers: .site/cutlass
# (carried) or CUTLASS_PATH.
set -u
START=$(date +%s)
: "${BENCH:?BENCH: the benchmark command}"
LIBS=${LIBS:-}
if [ -z "$LIBS" ]; then : "${VARIANT:?VARIANT: the variant tree}" "${UNITS:?UNITS: DASH_INSTANTIATIONS of both builds}"; fi
ROUNDS=${ROUNDS:-2}
TESTS=${TESTS:-}
OUT=${OUT:-/tmp/ab_out}
mkdir -p "$OUT"
ROOT=$PWD
export CC=${CC:-/usr/bin/gcc} CXX=${CXX:-/usr/bin/g++} PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
export CUTLASS_PATH=${CUTLASS_PATH:-$ROOT/.site/cutlass/include}
elapsed() { echo "$(( $(date +%s) - START ))s"; }
# side_dir a|b: the tree that runs side a or b (LIBS: the working tree, with that side's library in place).
side_dir() {
  if [ -n "$LIBS" ]; then
    set -- $1 $LIBS
    if [ "$1" = a ]; then gunzip -c "$2" > "$ROOT/dash/_C.abi3.so"; else gunzip -c "$3" > "$ROOT/dash/_C.abi3.so"; fi
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
for side in a b; do
  dir=$(side_dir $side)
  (cd "$dir" && python3 "$ROOT/tools/check_sass.py" dash/_C.abi3.so > "$OUT/sass_$side.txt" 2>&1)
  echo "sass $side: $(grep -c ' ok$' "$OUT/sass_$side.txt") ok, $(grep -c 'FAIL' "$OUT/sass_$side.txt") FAIL"
done
if [ -n "$TESTS" ]; then
  dir=$(side_dir b)
  (cd "$dir" && eval timeout 150 python3 -m pytest -q -p no:cacheprovider $TESTS > "$OUT/tests_b.txt" 2>&1
   echo "b tests rc=$?: $(tail -1 "$OUT/tests_b.txt") at $(elapsed)")
fi
for round in $(seq 1 "$ROUNDS"); do
  for side in a b; do
    dir=$(side_dir $side)
    (cd "$dir" && eval timeout 150 python3 $BENCH > "$OUT/bench_${side}_$round.txt" 2>&1)
    echo "== $side round $round at $(elapsed)"
    grep -E "^ *[0-9x]+ +[0-9]+ |^\| *[0-9x]+ \|" "$OUT/bench_${side}_$round.txt" | tr -s ' ' | tr '\n' ';'; echo
  done
done
(cd "$OUT" && tar czf logs.tgz ./*.txt ./*.log 2>/dev/null && rm -f ./*.txt ./*.log)
