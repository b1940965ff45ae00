"""Summarize `ncu -i REPORT --page source --csv --print-source sass` output: the instructions with the
most warp-stall samples, and the samples by stall reason, for one kernel.
  python ncu_stalls.py source.csv [top]"""
import csv, sys

rows = list(csv.reader(open(sys.argv[1], errors="replace")))
top = int(sys.argv[2]) if len(sys.argv) > 2 else 40
header_at = next(i for i, r in enumerate(rows) if any("Source" == c.strip() or "Address" in c for c in r))
header = [c.strip() for c in rows[header_at]]
body = [r for r in rows[header_at + 1:] if len(r) == len(header)]


def col(*words):
    for i, name in enumerate(header):
        if all(w.lower() in name.lower() for w in words):
            return i
    return None


def num(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return 0.0


addr, src = col("Address"), col("Source")
samples = col("Warp Stall Sampling", "All") or col("Sampling", "All") or col("Samples")
print("columns:", header)
if samples is None:
    sys.exit("no stall-sampling column")
total = sum(num(r[samples]) for r in body)
print(f"total samples {total:.0f} over {len(body)} instructions")
for r in sorted(body, key=lambda r: -num(r[samples]))[:top]:
    print(f"{num(r[samples]):8.0f} {100 * num(r[samples]) / max(total, 1):5.1f}%  {r[addr] if addr is not None else ''}  "
          f"{r[src][:90] if src is not None else ''}")
reasons = [i for i, name in enumerate(header) if name.lower().startswith("stall_") or "stall" in name.lower()
           and i != samples and "sampling" not in name.lower()]
if reasons:
    print("by column:")
    for i in sorted(reasons, key=lambda i: -sum(num(r[i]) for r in body))[:25]:
        print(f"  {header[i]:60s} {sum(num(r[i]) for r in body):12.0f}")
