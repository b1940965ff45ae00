"""Schedule-model predictions for deterministic full masks (ascending, counter-dealt): makespan in steps
for query-head-group parts x dealing-chunk widths, handoff 1 and 2 steps (RESULTS items 160-161).
  PYTHONPATH=. python3 bench/results/2026-11-28-causal-gap/model_parts_chunks.py"""
from dash.schedule import BwdScheduleView
from dash.schedule_sim import simulate
cases = [("192 gqa 16/4 2k", 8, 16, 4, 2048, 64, 96), ("192 gqa 4k", 4, 16, 4, 4096, 64, 96),
         ("192 mha 16 2k", 8, 16, 16, 2048, 64, 96),
         ("128 llama 32/8 2k", 8, 32, 8, 2048, 64, 128), ("128 llama 4k", 4, 32, 8, 4096, 64, 128),
         ("256 16/4 2k", 8, 16, 4, 2048, 64, 64), ("256 16/4 4k", 4, 16, 4, 4096, 64, 64),
         ("96 32/8 2k", 8, 32, 8, 2048, 64, 128), ("64 64/16 2k", 8, 64, 16, 2048, 128, 128)]
for name, b, h, hkv, L, bm, bn in cases:
    for hand in (1.0, 2.0):
        row = []
        for parts in [p for p in (1, 2, 4) if (h // hkv) % p == 0]:
            for chunk in (1, 2, 4, 8):
                v = BwdScheduleView.for_problem(b, h, L, L, bm, bn, False, "ascending", 132, heads_kv=hkv, parts=parts, chunk=chunk)
                r = simulate(v, 1.0, 0.5, True, handoff=hand, counter=True)
                row.append(f"p{parts}c{chunk}:{r.makespan:.0f}")
        print(name, "h", hand, " ".join(row), flush=True)
