#!/bin/bash
# Call 1 (session 33). Carry .ab/libs/{s32b,v96fo,v96fok1}.so.gz and .ab/fa3v (FlashAttention-3's hopper/ at
# 0251105a with varlen, hdim 64 / 128 bf16, built here; never committed).
#   s32b:    6652c11's library, every unit (main's kernels: b1b211c changed only comments in headers).
#   v96fo:   hdim 96 bf16 forward units only, the trait table's 96 entry with "fwd_capped_softmax": "fixed_offset"
#            (bf16 softcap calls on a kernel of their own, 192 x 96, P by a fixed offset, row sums by GEMM).
#   v96fok1: the same with "fwd_capped_exp2": "one_in_four_on_fma" (softcap units only).
# (1) Forward-only softcap tests at hdim 96 on each variant (cap-end rows, the kernel the table gives, a row
#     that sees one key). Prediction: pass.
# (2) A/B s32b / v96fo / v96fok1, hdim 96 softcap 30, 2k / 4k / 16k, both masks, two rounds. Prediction: fo
#     +0.5..+2%, k1 +1..+4% over s32b (192 x 96's three warpgroups share the MUFU as hdim 64's do, where the
#     fixed offset gave +5-8% and one in four on the FMA pipe +2% more; on 128 x 128 at 96 they gave +0.6-1.0%
#     and +0.3-2.0%: item 216). Causal 2k / 4k would then be back to 128 x 128's running max or above
#     (item 240's -2.3 / -1.9%).
# (3) The forward grid beside FA3 (fa3v), hdim 64 / 128, 2k-16k, both masks, in two processes with the
#     implementations' order reversed (dash first, then FA3 first), to see whether the order within a process
#     moves the ratio (item 239: causal 0.966-1.004). Prediction: ratios within ~1.5% between the two orders;
#     causal 0.98-1.00, full 1.02-1.04.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
for lib in v96fo v96fok1; do
  gunzip -c .ab/libs/$lib.so.gz > dash/_C.abi3.so
  timeout 120 python3 -m pytest -q -x tests/test_softcap.py -k "96 and (cap or one_key or kernel_the_table)" \
    > $OUT/tests_$lib.txt 2>&1
  echo "tests $lib rc=$? at $(t)"; tail -1 $OUT/tests_$lib.txt
done
LIBS='.ab/libs/s32b.so.gz .ab/libs/v96fo.so.gz .ab/libs/v96fok1.so.gz' \
  BENCH='bench/bench_fwd.py --hdims 96 --seqlens 2048 4096 16384 --masks causal full --impls dash --softcap 30 --warm-s 1 --min-s 0.5' \
  ROUNDS=2 SASS=0 OUT=$OUT/ab bash bench/ab_job.sh > $OUT/ab.log 2>&1
echo "ab rc=$? at $(t)"; cat $OUT/ab/summary.txt 2>/dev/null || tail -20 $OUT/ab.log
gunzip -c .ab/libs/s32b.so.gz > dash/_C.abi3.so
for order in "dash fa3" "fa3 dash"; do
  tag=${order// /_}
  PYTHONPATH=$PWD/.ab/fa3v timeout 150 python3 bench/bench_fwd.py --hdims 64 128 --seqlens 2048 4096 8192 16384 \
    --masks causal full --impls $order --warm-s 1 --min-s 0.5 > $OUT/fwd_fa3v_$tag.txt 2>&1
  echo "fwd grid ($order) rc=$? at $(t)"; grep -E "^\| (64|128)" $OUT/fwd_fa3v_$tag.txt
done
echo "all done at $(t)"
