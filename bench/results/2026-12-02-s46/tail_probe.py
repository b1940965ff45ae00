"""Session 46: is diagonal's tail dealt longest first at all, and what does it change? Times the
deterministic and non-deterministic diagonal backward with the tail dealt longest first and in
item order (DASH_TEST_ITEM_ORDER_TAIL) on shapes whose launch ends on one head's walks, beside
the schedule model's makespans. One process, steady-state-ish (1 s warm, 0.5 s timed each)."""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", ".."))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import dash  # noqa: E402
from bench_bwd import time_ms  # noqa: E402
from dash.schedule import BwdScheduleView  # noqa: E402
from dash.schedule_sim import simulate  # noqa: E402

HD = int(os.environ.get("HD", "128"))
for batch, heads, seqlen in [(1, 2, 16384), (1, 4, 16384), (1, 16, 16384), (2, 16, 8192)]:
    q, k, v, do = (torch.randn(batch, seqlen, heads, HD, device="cuda", dtype=torch.bfloat16) for _ in range(4))
    out, lse = dash.attn_fwd(q, k, v, causal=True)[:2]
    flops = 2.5 * 4 * batch * heads * seqlen * seqlen * HD / 2
    bm, bn = dash.bwd_tile_shape(HD, HD, 0.0)
    plan = dash.attn_bwd_plan(q, k, True, True, "diagonal")
    view = BwdScheduleView.for_problem(batch, heads, seqlen, seqlen, bm, bn, True, "diagonal", plan["grid"])
    model = [simulate(view, 1.0, 0.1, counter=True, tail=t).makespan for t in (False, True)]
    row = [f"b{batch} h{heads} s{seqlen} grid {plan['grid']} model tail gain {model[0] / model[1] - 1:+.1%}"]
    for det in (True, False):
        res = {}
        for tail in (True, False, True, False):
            os.environ["DASH_TEST_ITEM_ORDER_TAIL"] = "0" if tail else "1"
            fn = lambda: dash.attn_bwd(do, q, k, v, out, lse, causal=True, deterministic=det, schedule="diagonal")
            ms = time_ms(fn, 20, 1.0, 0.5)
            res.setdefault(tail, []).append(flops / ms / 1e9)
        on, off = sum(res[True]) / 2, sum(res[False]) / 2
        row.append(f"{'det' if det else 'nondet'} tail {on:.1f} item-order {off:.1f} ({on / off - 1:+.1%})")
    print(" | ".join(row), flush=True)
