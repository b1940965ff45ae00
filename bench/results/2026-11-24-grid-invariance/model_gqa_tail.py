from dash.schedule import BwdScheduleView, DIAGONAL, SYMMETRIC_SHIFT
from dash.schedule_sim import simulate
S=2048; b=8
for p in (1,2,4):
    v = BwdScheduleView.for_problem(b, 32, S, S, 64, 128, True, DIAGONAL, 132, 8, p, 1)
    g = 4 // p
    kw = dict(handoff=0.5, bytes_per_head=4.0 * S * 128 * g, miss_cost=0.3, counter=True)
    d = simulate(v, 1.0, 0.5, **kw); nd = simulate(v, 1.0, 0.5, deterministic=False, **kw)
    nd0 = simulate(v, 1.0, 0.5, deterministic=False, handoff=0.5, counter=True)
    total = sum(len(v.steps(v.task(i,0))) for i in range(v.num_items()))
    print(p, "det", d.makespan, "stall", round(d.stall), "nondet", nd.makespan, "nondet-nomiss", nd0.makespan, "avg work", total*1.5/132)
