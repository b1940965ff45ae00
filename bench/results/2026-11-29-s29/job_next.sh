#!/bin/bash
# Prepared for the next session's first call (not run). Carry .ab/libs/main.so.gz (the CI build of
# a23a5cc: HEAD's kernels, 13730dc's wgmma_batch included; its SASS is f555448's line for line) and
# .ab/bin/wgmma_rate (bench/wgmma_rate.cu as of this session, built here with the command in its header).
# (0) The GPU tests on main first: 13730dc changed sm90_primitives.h after session 29's last GPU
#     test run. Its SASS is identical to the tested library's in all 82 kernels, so they should pass
#     as on b29 (1826 passed); this makes it measured rather than argued.
# (1) wgmma_rate: WGMMA's rate by shape, now with the fixed-offset softcap forward's P V GEMMs (RS,
#     two warpgroups, N = 128 / 192) with and without the 64 x 8 row-sum GEMM beside them in the
#     same commit group, and N = 8 alone. Item 218's open question: what the row-sum GEMM costs the
#     tensor pipe at 192 / 192 x 128, where the softcap kernel's warps wait on their P V group and
#     fp32 adds in its place ran 3-5% slower.
#     Prediction: N = 8 alone runs at <= 25% of 4096 FLOP a cycle (a fixed cost per instruction);
#     "192 + rowsum" 4-10% below "192" RS (its FLOPs alone would be 4.2%), "128 + rowsum" 6-14%
#     below "128" RS.
# (2) Softcap's forward cost at every head dim in one job on main (softcap 30 against plain, 4k and
#     16k, both masks): the table issue 13's closing needs, so far pieced from sessions 28 / 29.
#     Prediction: 64 20-24%, 96 / 128 16-18%, 192 7-11%, 192 x 128 10-13%, 256 3-5%.
# (3) hdim 64's softcap backward (24-26% its cost) with one of four rows' exponentials on the FMA
#     pipe (bwd_softcap_exp2_on_fma.patch; library bx64: the hdim 64 bf16 softcap backward units and
#     hdim 64 bf16 forward units, built here from 13730dc + the patch). Carry .ab/libs/bx64.so.gz.
#     Why: the forward's fixed-offset walk at 64 gained +1-2.4% from the same share (item 216); the
#     softcap backward's P pass takes two MUFU ops a score (tanh, ex2), ~0.125 clocks a score an SM
#     against its five GEMMs' ~0.156; item 122's FMA-pipe exps in the plain backward lost 1-8%, but
#     there one MUFU op a score was all the P pass had. A sanity run first (test_softcap's full-mask
#     hdim 64 bf16 reference cases and the 50-repeat bitwise case at 64).
#     SASS (check_sass): the MMA main loops grow 800 -> 1058 (full) and 892 -> 1150 (band) instructions,
#     more than the 8 exponentials a thread-step predict (the P pass is compiled twice at 64,
#     bwd_mask "two_bodies"); no spills. Prediction: sanity passes; softcap 30 det / non-det at 4k /
#     16k: -6..+2%, more likely a loss (the issue slots pay more than the MUFU saves).
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
gunzip -c .ab/libs/main.so.gz > dash/_C.abi3.so
FILES="test_softcap test_fwd test_bwd_correctness test_determinism test_head_dims test_varlen test_window test_gqa
  test_invariance test_deadlock test_flash_attn_interface_gpu test_traits" SASS=0 DEADLINE=330 STRESS_MAX_S=0 \
  OUT=$OUT/tests bash tools/gpu_test_job.sh
echo "tests done at $(t)"
timeout 120 .ab/bin/wgmma_rate > $OUT/wgmma_rate.txt 2>&1; echo "wgmma_rate rc=$? at $(t)"
grep -E "^\| +(8|128|192)" $OUT/wgmma_rate.txt
gunzip -c .ab/libs/main.so.gz > dash/_C.abi3.so
W="--warm-s 1 --min-s 0.5 --impls dash"
for cap in 0 30; do
  timeout 200 python3 bench/bench_fwd.py --hdims 64 96 128 192 192x128 256 --seqlens 4096 16384 --masks causal full \
    --softcap $cap $W > $OUT/fwd_cap$cap.txt 2>&1; echo "softcap $cap rc=$? at $(t)"
done
python3 - "$OUT" <<'PY'
import re, sys, pathlib
out = pathlib.Path(sys.argv[1])
def rows(f):
    d = {}
    for line in (out / f).read_text().splitlines():
        c = [x.strip() for x in line.strip("|").split("|")]
        if len(c) >= 4 and re.fullmatch(r"\d+(x\d+)?", c[0]) and c[1].isdigit():
            d[(c[0], c[1], c[2])] = float(c[3])
    return d
p, s = rows("fwd_cap0.txt"), rows("fwd_cap30.txt")
print("| hdim | seqlen | mask | plain | softcap 30 | cost |\n|---|---:|---|---:|---:|---:|")
for k in p:
    if k in s:
        print(f"| {k[0]} | {k[1]} | {k[2]} | {p[k]:.1f} | {s[k]:.1f} | {100 * (1 - s[k] / p[k]):.1f}% |")
PY
gunzip -c .ab/libs/bx64.so.gz > dash/_C.abi3.so
timeout 90 python3 -m pytest -q -p no:cacheprovider tests/test_softcap.py \
  -k "(test_matches_reference and nc--1_-1 and d64-bf16) or (test_bitwise_reproducible and 4097)" > $OUT/sanity_bx64.txt 2>&1
echo "bx64 sanity rc=$?: $(tail -1 $OUT/sanity_bx64.txt)"
B="bench/bench_bwd.py --hdim 64 --seqlen 4096 16384 --mask full causal --impl dash_det dash --softcap 30 --warm-s 1 --min-s 0.5"
LIBS='.ab/libs/main.so.gz .ab/libs/bx64.so.gz' BENCH="$B" ROUNDS=2 SASS=0 OUT=$OUT/ab_bx64 bash bench/ab_job.sh 2>&1 | tail -12
echo "all done at $(t)"
