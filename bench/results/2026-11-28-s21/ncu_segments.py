"""Nsight Compute source-page samples (`ncu -i R --page source --csv --print-source sass`, gzip'd)
summed over address ranges of one kernel, as MMA-warp cycles (RESULTS.md item 166's normalization:
a range's share of the MMA warps' samples times sm__cycles_active).
    python ncu_segments.py SRC.csv.gz CYCLES_ACTIVE STEPS_PER_SM MMA_LO:MMA_HI name:lo:hi ...
    python ncu_segments.py SRC.csv.gz --list lo:hi      (the instructions of a range with samples)
Offsets are hex, from the kernel's first instruction; MMA_LO:MMA_HI is the MMA warpgroups' in-line
code (their out-of-line retry blocks carry few samples and are left out)."""
import csv, gzip, sys


def load(path):
    rows = list(csv.reader(gzip.open(path, "rt", errors="replace")))
    at = next(i for i, r in enumerate(rows) if any("Address" in c for c in r))
    head = [c.strip() for c in rows[at]]
    body = [r for r in rows[at + 1:] if len(r) == len(head)]
    a, s, n = head.index("Address"), head.index("Source"), head.index("Warp Stall Sampling (All Samples)")
    reasons = [i for i, c in enumerate(head) if c.startswith("stall_") and "Not Issued" not in c]
    base = int(body[0][a], 16)
    num = lambda t: float(t.replace(",", "") or 0)
    out = []
    for r in body:
        top = max(((num(r[i]), head[i][6:]) for i in reasons), default=(0, ""))
        out.append((int(r[a], 16) - base, int(num(r[n])), r[s].strip(), top))
    return out


def span(text):
    lo, hi = text.split(":")[-2:]
    return int(lo, 16), int(hi, 16)


if __name__ == "__main__":
    rows = load(sys.argv[1])
    if sys.argv[2] == "--list":
        lo, hi = span(sys.argv[3])
        for off, n, src, top in rows:
            if lo <= off < hi:
                print(f"{off:6x} {n:7d} {src[:72]:72s} {top[1]}:{int(top[0])}")
        sys.exit()
    cycles, steps = float(sys.argv[2]), float(sys.argv[3])
    mma_lo, mma_hi = span(sys.argv[4])
    mma = sum(n for off, n, _, _ in rows if mma_lo <= off < mma_hi)
    print(f"MMA samples {mma} of {sum(n for _, n, _, _ in rows)}")
    for seg in sys.argv[5:]:
        name = seg.split(":")[0]
        lo, hi = span(seg)
        n = sum(x[1] for x in rows if lo <= x[0] < hi)
        print(f"{name:34s} {n:7d} {n / mma * cycles / 1e6:6.3f} Mcyc {n / mma * cycles / steps:6.0f} cyc/step")
