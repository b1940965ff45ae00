import sys, time
from dash.schedule import BwdScheduleView, DIAGONAL, SYMMETRIC_SHIFT, ASCENDING, SHIFT, deal_chunk_for
from dash.schedule_sim import simulate
def run(b, h, hkv, S, mask, sched, parts, counter, chunk=1, red=0.5, ho=0.5, miss=0.3):
    v = BwdScheduleView.for_problem(b, h, S, S, 64, 128, mask, sched, 132, hkv, parts, chunk)
    g = h // hkv // parts
    r = simulate(v, 1.0, red, handoff=ho, bytes_per_head=4.0 * S * 128 * g, miss_cost=miss, counter=counter)
    return r.makespan
for S in (2048, 4096, 8192):
    b = 16384 // S
    base = run(b, 32, 8, S, True, SYMMETRIC_SHIFT, 1, False)
    out = [f"S={S} symshift p1 {base:.0f}"]
    for p in (1, 2, 4):
        m = run(b, 32, 8, S, True, DIAGONAL, p, True)
        out.append(f"diag p{p} {base/m:.3f}")
    m = run(b, 32, 8, S, True, DIAGONAL, 1, False)
    out.append(f"diag-static p1 {base/m:.3f}")
    print(" | ".join(out), flush=True)
