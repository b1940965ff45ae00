#!/bin/bash
# Builds upstream FlashAttention-3 (its hopper/ package) as a benchmark peer, outside the repository's
# tracked files, the way users get it for bf16 training calls: clusters ON (FA3's full-mask forward at
# hdim >= 128 runs 2-CTA clusters that multicast K / V; a build without them runs 2.1-2.7% slower at
# 8k-16k, bench/RESULTS.md item 281), varlen on, every head dim, fp16 / fp8 / paged / split / softcap /
# local / packgqa / SM80 off (features the bench grid does not call; each adds build time).
#
#   tools/build_fa3_peer.sh <flash-attention git dir> <cutlass git dir> [out dir, default .ab/fa3c]
#
# The git dirs are snapshots (the `fetch` tool: github:Dao-AILab/flash-attention and
# github:NVIDIA/cutlass); FA3 pins CUTLASS through its csrc/cutlass submodule pointer, which is read
# from the FA3 snapshot. On the 2-core CPU machine the build takes about an hour (23 units); the
# result (~77 MB) goes on PYTHONPATH: PYTHONPATH=$PWD/.ab/fa3c python3 bench/bench_fwd.py --impls dash fa3.
# To carry it to the GPU machine (64 MiB limit), gzip flash_attn_3/_C.abi3.so and gunzip it there.
set -euo pipefail
FA3_GIT=${1:?flash-attention git dir}
CUTLASS_GIT=${2:?cutlass git dir}
OUT=$(realpath -m "${3:-.ab/fa3c}")
WORK=$(mktemp -d /tmp/fa3_peer.XXXXXX)
# FA3's setup.py imports wheel, which a fresh environment lacks.
python3 -c 'import wheel' 2>/dev/null || python3 -m pip install -q wheel
# (The snapshots lack some large binary blobs, e.g. assets/*.pdf: git archive names them and goes on.)
git --git-dir="$FA3_GIT" archive HEAD hopper README.md | tar -x -C "$WORK"
pin=$(git --git-dir="$FA3_GIT" ls-tree HEAD csrc/cutlass | awk '{print $3}')
mkdir -p "$WORK/csrc/cutlass"
git --git-dir="$CUTLASS_GIT" archive "$pin" include tools/util/include | tar -x -C "$WORK/csrc/cutlass"
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda} MAX_JOBS=${MAX_JOBS:-2} NVCC_THREADS=${NVCC_THREADS:-1}
# setup.py reads FLASH_ATTENTION_DISABLE_<X>; SM80 (not SM8x) is the name it reads for the Ampere units.
for feature in SM80 FP16 FP8 SPLIT PAGEDKV APPENDKV SOFTCAP PACKGQA LOCAL HDIMDIFF64; do
  export FLASH_ATTENTION_DISABLE_$feature=TRUE
done
unset FLASH_ATTENTION_DISABLE_CLUSTER
(cd "$WORK/hopper" && python3 setup.py build_ext --inplace)
mkdir -p "$OUT/flash_attn_3"
cp "$WORK/hopper/flash_attn_3/_C.abi3.so" "$WORK/hopper/flash_attn_3/__init__.py" "$OUT/flash_attn_3/"
cp "$WORK/hopper/flash_attn_interface.py" "$WORK/hopper/flash_attn_config.py" "$OUT/"
python3 -c "import sys; sys.path.insert(0, '$OUT'); import flash_attn_config as c; \
flags = c.CONFIG['build_flags']; assert not flags['FLASHATTENTION_DISABLE_CLUSTER'], flags; print('clusters on:', '$OUT')"
