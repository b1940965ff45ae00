#!/bin/bash
# Causal backward: diagonal (auto, walk library) against descending dealt from a counter in
# chunks of walks (KV-tile-major within a chunk, longest first), chunk swept by DASH_DEAL_CHUNK.
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
mkdir -p $OUT/dc
for round in 1 2; do
  gunzip -c .ab/libs/walk.so.gz > dash/_C.abi3.so
  timeout 120 python3 bench/bench_bwd.py --hdim 128 64 --seqlen 2048 4096 8192 16384 --mask causal \
    --impl dash_det --warm-s 1 --min-s 0.5 --out $OUT/dc/o > $OUT/dc/diag_$round.txt 2>&1
  gunzip -c .ab/libs/dchunk.so.gz > dash/_C.abi3.so
  for ch in 2 4 8 1000; do
    DASH_DEAL_CHUNK=$ch timeout 120 python3 bench/bench_bwd.py --hdim 128 64 --seqlen 2048 4096 8192 16384 --mask causal \
      --impl dash_det:descending --warm-s 1 --min-s 0.5 --out $OUT/dc/o > $OUT/dc/desc${ch}_$round.txt 2>&1
  done
done
python3 - <<'PY' > $OUT/dc/summary.txt
import glob, re, os, collections
d = os.environ["OUT"] + "/dc"
rows = collections.defaultdict(dict)
for f in sorted(glob.glob(d + "/*_?.txt")):
    name = os.path.basename(f)[:-6]
    for line in open(f):
        m = re.match(r"\s*(\d+)\s+(\d+)\s+causal\s+([\d.]+)", line)
        if m: rows[(int(m.group(1)), int(m.group(2)))].setdefault(name, []).append(float(m.group(3)))
names = ["diag", "desc2", "desc4", "desc8", "desc1000"]
print("hdim seqlen " + " ".join(f"{n:>16s}" for n in names))
for k in sorted(rows):
    base = sum(rows[k]["diag"]) / len(rows[k]["diag"])
    print(f"{k[0]:4d} {k[1]:6d} " + " ".join(f"{sum(rows[k][n])/len(rows[k][n]):7.1f} ({sum(rows[k][n])/len(rows[k][n])/base-1:+.1%})" if n in rows[k] else f"{'-':>16s}" for n in names))
PY
cat $OUT/dc/summary.txt
gunzip -c .ab/libs/dchunk.so.gz > dash/_C.abi3.so
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/test_determinism.py tests/test_deadlock.py tests/test_window.py -k "descending" > $OUT/dc/tests.txt 2>&1
tail -30 $OUT/dc/tests.txt
cd $OUT && tar czf dc.tgz dc
