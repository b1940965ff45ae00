#!/bin/bash
# Item 118, second job: base (HEAD) against st64 (hdim 64's forward epilogue staged through smem),
# three rounds, 512-16k, both masks (the same libraries' recipe as job_q2.sh).
START=$(date +%s)
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 CC=/usr/bin/gcc CXX=/usr/bin/g++ PATH=$PATH:/usr/local/cuda/bin
export CUTLASS_PATH=$PWD/.site/cutlass/include
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
mkdir -p .ab/built
build() {  # dir name
  (cd "$1" && rm -rf build dash/_C.abi3.so && DASH_INSTANTIATIONS='fwd_hdim64_bf16_*' MAX_JOBS=8 python3 setup.py build_ext --inplace > "$OUT/build_$2.log" 2>&1
   echo "$2 build rc=$? at $(( $(date +%s) - START ))s"; gzip -c dash/_C.abi3.so > "$OLDPWD/.ab/built/$2.so.gz")
}
build . base & build .ab/st64 st64 & wait
LIBS='.ab/built/base.so.gz .ab/built/st64.so.gz' ROUNDS=3 \
BENCH='bench/bench_fwd.py --hdims 64 --seqlens 512 1024 2048 4096 8192 16384 --masks full causal --impls dash --warm-s 1 --min-s 0.5' \
bash bench/ab_job.sh
echo "done at $(( $(date +%s) - START ))s"
