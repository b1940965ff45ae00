#!/bin/bash
# The hdim 64 / 128 bf16 units, then tests/test_distributed_gpu.py (ring with overlapped transfers and sm_margin).
START=$(date +%s)
export CC=/usr/bin/gcc CXX=/usr/bin/g++ CUTLASS_PATH=$PWD/.site/cutlass/include PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
rm -rf build dash/_C.abi3.so
DASH_INSTANTIATIONS='bwd_hdim64_bf16_full,bwd_hdim64_bf16_band,bwd_hdim128_bf16_full,bwd_hdim128_bf16_band,fwd_hdim64_bf16_full,fwd_hdim64_bf16_band,fwd_hdim128_bf16_full,fwd_hdim128_bf16_band' MAX_JOBS=16 python3 setup.py build_ext --inplace > $OUT/build.log 2>&1; echo "build rc=$? $(( $(date +%s)-START ))s"
timeout 200 python3 -m pytest -q -p no:cacheprovider --durations=3 tests/test_distributed_gpu.py > $OUT/dist.txt 2>&1; echo "dist rc=$? at $(( $(date +%s)-START ))s"; tail -8 $OUT/dist.txt
for cp in ring; do
  timeout 90 torchrun --standalone --nproc-per-node 1 examples/train_gpt_cp.py --cp $cp --deterministic --steps 5 --seqlen 1024 --layers 2 --sm-margin 8 --out $OUT/cp > $OUT/cp_$cp.txt 2>&1; echo "cp $cp rc=$?"; tail -2 $OUT/cp_$cp.txt
done
