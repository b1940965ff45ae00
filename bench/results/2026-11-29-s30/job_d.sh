#!/bin/bash
# FlashAttention-3 with softcap as a peer (item 223): .ab/fa3sc is FA3's hopper/ build (the same sources
# as .ab/fa3v, Aug 2026 HEAD) with softcap compiled in: hdim 64 / 128, bf16, no varlen, no local.
# Carry .ab/libs/main.so.gz and .ab/fa3sc. Softcap 30 against plain, forward and backward, dash and
# FA3 in one process a row, steady-state method.
# Prediction: FA3's softcap costs 16-18% (fwd hdim 128) and 26-29% (fwd hdim 64), as item 99 measured
# it by itself; dash's softcap forward 1.0-1.1x FA3's softcap forward at 128 (the same kernels' 1.00-1.04x
# plain ratio, the same MUFU bound) and 1.05-1.15x at 64 (item 217's fixed offset); backward: dash det
# >= FA3 non-det with softcap where it is without.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/.ab/fa3sc:$PYTHONPATH
gunzip -c .ab/libs/main.so.gz > dash/_C.abi3.so
timeout 60 python3 bench/results/2026-11-29-s30/fa3_softcap_check.py > $OUT/check.txt 2>&1; echo "check rc=$? at $(t)"; cat $OUT/check.txt | tail -5
W="--warm-s 1 --min-s 0.5"
for cap in 0 30; do
  timeout 120 python3 bench/bench_fwd.py --hdims 64 128 --seqlens 2048 4096 16384 --masks causal full --softcap $cap \
    --impls dash fa3 $W > $OUT/fwd_cap$cap.txt 2>&1; echo "fwd softcap $cap rc=$? at $(t)"
done
for cap in 0 30; do
  timeout 150 python3 bench/bench_bwd.py --hdim 64 128 --seqlen 4096 16384 --mask causal full --softcap $cap \
    --impl dash_det dash fa3_det fa3 $W > $OUT/bwd_cap$cap.txt 2>&1; echo "bwd softcap $cap rc=$? at $(t)"
done
for f in fwd_cap0 fwd_cap30 bwd_cap0 bwd_cap30; do echo "== $f"; grep -E "^\||^ +[0-9]" $OUT/$f.txt | head -30; done
echo "all done at $(t)"
