#!/bin/bash
# Item 115: the lazy rescale (item 114's per-row form) at the head dims that had not measured it.
# Three forward-only libraries built here side by side: base (HEAD's units fwd_hdim{64,96,192,
# 192x128,256}_bf16_*), lazyhd (.ab/lazyhd: the trait on at 96, 192 / 128, 192, 256) and lazy64
# (.ab/lazy64: at hdim 64 the trait on and O rescaled before P V). Forward tests of the variants'
# units (job_l1b.sh: base / variant alternately, two rounds each).
START=$(date +%s)
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 CC=/usr/bin/gcc CXX=/usr/bin/g++ PATH=$PATH:/usr/local/cuda/bin
export CUTLASS_PATH=$PWD/.site/cutlass/include
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
build() {  # dir units jobs name
  (cd "$1" && rm -rf build dash/_C.abi3.so && DASH_INSTANTIATIONS="$2" MAX_JOBS=$3 python3 setup.py build_ext --inplace > "$OUT/build_$4.log" 2>&1
   echo "$4 build rc=$? at $(( $(date +%s) - START ))s")
}
mkdir -p .ab/built
build . 'fwd_hdim64_bf16_*,fwd_hdim96_bf16_*,fwd_hdim192_bf16_*,fwd_hdim192x128_bf16_*,fwd_hdim256_bf16_*' 10 base &
build .ab/lazyhd 'fwd_hdim96_bf16_*,fwd_hdim192_bf16_*,fwd_hdim192x128_bf16_*,fwd_hdim256_bf16_*' 8 lazyhd &
build .ab/lazy64 'fwd_hdim64_bf16_*' 2 lazy64 &
wait
gzip -c dash/_C.abi3.so > .ab/built/base.so.gz
gzip -c .ab/lazyhd/dash/_C.abi3.so > .ab/built/lazyhd.so.gz
gzip -c .ab/lazy64/dash/_C.abi3.so > .ab/built/lazy64.so.gz
for v in lazyhd lazy64; do
  (cd .ab/$v && python3 tools/check_sass.py dash/_C.abi3.so > $OUT/sass_$v.txt 2>&1)
  gunzip -c .ab/built/$v.so.gz > dash/_C.abi3.so
  timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_fwd.py tests/test_head_dims.py -k "not fp16 and not float16" > $OUT/tests_$v.txt 2>&1
  echo "$v: sass $(grep -c ' ok$' $OUT/sass_$v.txt) ok $(grep -c FAIL $OUT/sass_$v.txt) FAIL; tests $(grep -E 'passed|failed' $OUT/tests_$v.txt | tail -1);" \
    "failures not for a missing unit: $(grep -E '^E ' $OUT/tests_$v.txt | grep -vc 'this build has no') at $(( $(date +%s) - START ))s"
done
cp .ab/built/*.so.gz $OUT/
echo "done at $(( $(date +%s) - START ))s"
