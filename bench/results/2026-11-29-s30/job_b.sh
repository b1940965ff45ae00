#!/bin/bash
# Session 30, call 2: session 29's job_next.sh parts (2) and (3) (predictions there): softcap 30's
# forward cost at every head dim on main, then bx64 (hdim 64 softcap backward, one of four rows'
# exponentials on the FMA pipe) against main. Carry .ab/libs/main.so.gz and .ab/libs/bx64.so.gz.
START=$(date +%s); t() { echo "$(( $(date +%s) - START ))s"; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
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
