"""Summary of an A/B job's benchmark rows (bench/ab_job.sh): each row's mean TFLOPS per side over
the rounds, and its change against the first side.

    python3 bench/ab_summary.py OUT_DIR SIDE [SIDE ...]

Reads OUT_DIR/bench<k>_<side>_<round>.txt, the tables bench_fwd.py / bench_bwd.py print: markdown
rows "| hdim | seqlen | mask | <TFLOPS> | ..." or bench_bwd.py's plain rows "hdim seqlen mask
<TFLOPS> ...", under a header naming each implementation's column. A row is keyed by its benchmark
number, its leading (hdim, seqlen, mask) fields and the implementation (every column, e.g. bench_bwd's
"dash det" and "dash non-det").
"""
import collections
import pathlib
import re
import sys

MARKDOWN_ROW = re.compile(r"^\|\s*([0-9x]+)\s*\|\s*(\d+)\s*\|\s*(\w+)\s*((?:\|\s*[\d.]+\s*)+)\|")
PLAIN_ROW = re.compile(r"^\s*([0-9x]+)\s+(\d+)\s+(\w+)((?:\s+[\d.]+)+)\s*$")
MARKDOWN_HEADER = re.compile(r"^\|\s*hdim\s*\|\s*seqlen\s*\|\s*mask\s*\|(.*)\|\s*$")
PLAIN_HEADER = re.compile(r"^\s*hdim\s+seqlen\s+mask\s+(.*?)\s*$")


def rows(path):
    """(hdim, seqlen, mask, implementation) -> TFLOPS, in file order; an implementation is named by its
    column's header (or its column number where a row comes before any header)."""
    found = {}
    names = []
    for line in path.read_text().splitlines():
        header = MARKDOWN_HEADER.match(line)
        if header:
            names = [n.strip() for n in header.group(1).split("|")]
            continue
        header = PLAIN_HEADER.match(line)
        if header:
            names = re.split(r"\s{2,}", header.group(1))
            continue
        m = MARKDOWN_ROW.match(line) or PLAIN_ROW.match(line)
        if m:
            values = [float(v) for v in re.split(r"[|\s]+", m.group(4)) if v]
            for i, tflops in enumerate(values):
                name = names[i] if i < len(names) else f"column {i + 1}"
                found[(m.group(1), int(m.group(2)), m.group(3), name)] = tflops
    return found


def summarize(out_dir, sides):
    values = collections.defaultdict(list)  # (bench, row, side) -> TFLOPS per round
    order = []
    for path in sorted(out_dir.glob("bench*_*_*.txt")):
        m = re.fullmatch(r"bench(\d+)_(.+)_(\d+)\.txt", path.name)
        if not m or m.group(2) not in sides:
            continue
        for row, tflops in rows(path).items():
            key = (int(m.group(1)), row)
            if key not in order:
                order.append(key)
            values[key + (m.group(2),)].append(tflops)
    lines = ["| bench | hdim | seqlen | mask | implementation | " + " | ".join(sides) + " |",
             "|---|---|---:|---|---|" + "---:|" * len(sides)]
    for bench, (hdim, seqlen, mask, impl) in sorted(order, key=lambda k: (k[0], order.index(k))):
        cells = []
        base = None
        for side in sides:
            got = values.get((bench, (hdim, seqlen, mask, impl), side))
            if not got:
                cells.append("-")
                continue
            mean = sum(got) / len(got)
            if base is None:
                base = mean
                cells.append(f"{mean:.1f}")
            else:
                cells.append(f"{mean:.1f} ({100 * (mean / base - 1):+.1f}%)")
        lines.append(f"| {bench} | {hdim} | {seqlen} | {mask} | {impl} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    print(summarize(pathlib.Path(sys.argv[1]), sys.argv[2:]))
