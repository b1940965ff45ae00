#!/bin/bash
# Item 118: hdim 64's forward choices again, now that it rescales lazily (item 115): base (HEAD),
# ct64 (.ab/ct64: "fwd_score_tests" compiled instead of run_time) and st64 (.ab/st64: "fwd_epilogue"
# staged). Three libraries of the fwd_hdim64_bf16_* units built side by side, then bench/ab_job.sh
# in LIBS mode (each round base, ct64, st64 in turn).
START=$(date +%s)
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 CC=/usr/bin/gcc CXX=/usr/bin/g++ PATH=$PATH:/usr/local/cuda/bin
export CUTLASS_PATH=$PWD/.site/cutlass/include
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
mkdir -p .ab/built
build() {  # dir name
  (cd "$1" && rm -rf build dash/_C.abi3.so && DASH_INSTANTIATIONS='fwd_hdim64_bf16_*' MAX_JOBS=5 python3 setup.py build_ext --inplace > "$OUT/build_$2.log" 2>&1
   echo "$2 build rc=$? at $(( $(date +%s) - START ))s"; gzip -c dash/_C.abi3.so > "$OLDPWD/.ab/built/$2.so.gz")
}
build . base & build .ab/ct64 ct64 & build .ab/st64 st64 & wait
for v in ct64 st64; do (cd .ab/$v && python3 tools/check_sass.py dash/_C.abi3.so > $OUT/sass_$v.txt 2>&1; echo "$v sass: $(grep -c ' ok$' $OUT/sass_$v.txt) ok"); done
gunzip -c .ab/built/st64.so.gz > dash/_C.abi3.so
timeout 100 python3 -m pytest -q -p no:cacheprovider tests/test_fwd.py -k "64 and not float16 and not fp16" > $OUT/tests_st64.txt 2>&1
echo "st64 tests: $(tail -1 $OUT/tests_st64.txt); not a missing unit: $(grep -E '^E ' $OUT/tests_st64.txt | grep -vc 'this build has no')"
gunzip -c .ab/built/ct64.so.gz > dash/_C.abi3.so
timeout 100 python3 -m pytest -q -p no:cacheprovider tests/test_fwd.py -k "64 and not float16 and not fp16" > $OUT/tests_ct64.txt 2>&1
echo "ct64 tests: $(tail -1 $OUT/tests_ct64.txt); not a missing unit: $(grep -E '^E ' $OUT/tests_ct64.txt | grep -vc 'this build has no')"
LIBS='.ab/built/base.so.gz .ab/built/ct64.so.gz .ab/built/st64.so.gz' ROUNDS=2 \
BENCH='bench/bench_fwd.py --hdims 64 --seqlens 512 2048 4096 16384 --masks full causal --impls dash --warm-s 1 --min-s 0.5' \
bash bench/ab_job.sh
echo "done at $(( $(date +%s) - START ))s"
