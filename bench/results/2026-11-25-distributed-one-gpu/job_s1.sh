#!/bin/bash
# Session 1 job: build HEAD, run the one-GPU distributed tests, ship the library back in pieces.
START=$(date +%s)
export CC=/usr/bin/gcc CXX=/usr/bin/g++ CUTLASS_PATH=$PWD/.site/cutlass/include PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
rm -f dash/_C.abi3.so
MAX_JOBS=16 python3 setup.py build_ext --inplace > $OUT/build.log 2>&1; echo "build rc=$? $(( $(date +%s)-START ))s"
gzip -1 -c dash/_C.abi3.so | split -b 15M - $OUT/lib.gz.part_
timeout 240 python3 -m pytest -q -p no:cacheprovider --durations=5 tests/test_distributed_gpu.py > $OUT/dist.txt 2>&1
echo "dist rc=$? at $(( $(date +%s)-START ))s"; tail -15 $OUT/dist.txt
for cp in ulysses ring; do
  timeout 90 torchrun --standalone --nproc-per-node 1 examples/train_gpt_cp.py --cp $cp --deterministic --steps 5 --seqlen 1024 --layers 2 --out $OUT/cp > $OUT/cp_$cp.txt 2>&1; echo "cp $cp rc=$?"; tail -4 $OUT/cp_$cp.txt
done
