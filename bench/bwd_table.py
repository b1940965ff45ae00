"""Renders a bench_bwd.json (from bench/bench_bwd.py) as the markdown table of
bench/RESULTS.md, with the ratios issue 3 asks about: best deterministic schedule over
the non-deterministic mode, `auto` over the best schedule, symmetric shift / best causal
schedule over `ascending` and over `fa3_baseline`, non-deterministic over cuDNN.

  python bench/bwd_table.py bench/results/<date>/bench_bwd.json
"""
from __future__ import annotations

import json
import pathlib
import sys

SCHEDULE_COLUMNS = ["ascending", "shift", "descending", "symmetric_shift", "fa3_baseline"]
SHORT = {"symmetric_shift": "sym. shift"}


def fmt(x: float | None, digits: int = 1) -> str:
    return f"{x:.{digits}f}" if x else "-"


def ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:.2f}" if a and b else "-"


def render(data: dict) -> str:
    results = data["results"]
    present = [s for s in SCHEDULE_COLUMNS if any(r["tflops"].get(f"dash_det:{s}") for r in results)]
    head = (["hdim", "seqlen", "mask", "dash det (auto)", "dash non-det", "cuDNN", "SDPA flash det (FA2)"] +
            [f"det {SHORT.get(s, s).replace('_', ' ')}" for s in present] +
            ["best det / non-det", "auto / best det", "best det / ascending", "best det / fa3_baseline",
             "non-det / cuDNN"])
    lines = ["| " + " | ".join(head) + " |", "|" + "---:|" * 2 + "---|" + "---:|" * (len(head) - 3)]
    for r in results:
        t = r["tflops"]
        det = {s: t.get(f"dash_det:{s}") for s in present}
        auto = t.get("dash_det")  # auto runs one of the schedules: it counts as a measurement of it
        best = max((v for v in [*det.values(), auto] if v), default=None)
        auto_cell = f"{fmt(auto)} ({SHORT.get(r['plan']['schedule'], r['plan']['schedule'])})" if auto else "-"
        hdim = str(r.get("hdim", r["head_dim"]))  # "192x128" where v's head dim differs (older JSON: head_dim)
        row = ([hdim, str(r["seqlen"]), "causal" if r["causal"] else "full", auto_cell,
                fmt(t.get("dash")), fmt(t.get("cudnn")), fmt(t.get("sdpa_flash_det"))] +
               [fmt(det[s]) for s in present] +
               [ratio(best, t.get("dash")), ratio(auto, best), ratio(best, det.get("ascending")),
                ratio(best, det.get("fa3_baseline")), ratio(t.get("dash"), t.get("cudnn"))])
        lines.append("| " + " | ".join(row) + " |")
    ranked = [r["model_ranking"] for r in results if r.get("model_ranking")]
    if ranked:
        lines.append("")
        lines.append(f"Model ranking agrees with the measured ranking at {sum(r[2] for r in ranked)}/{len(ranked)} points.")
    return "\n".join(lines)


if __name__ == "__main__":
    print(render(json.loads(pathlib.Path(sys.argv[1]).read_text())))
