# Model (dash.schedule_sim, counter dealing, reduce 0.3, handoff 0.5) of the two-phase diagonal against plain, by lag; needs two_phase_diagonal.patch applied (DASH tree on PYTHONPATH).
import sys, dash.schedule as S
from dash.schedule import BwdScheduleView, DIAGONAL
from dash.schedule_sim import simulate
from dash.geometry import MaskWindow
orig = S.diagonal_split
def run(batch, heads, seq, bm, bn, lag, split=True, grid=132, r=0.3, h=0.5):
    S.diagonal_split = orig if split else (lambda t: 0)
    v = BwdScheduleView.for_problem(batch, heads, seq, seq, bm, bn, True, DIAGONAL, grid, lag=lag)
    res = simulate(v, 1.0, r, handoff=h, counter=True)
    return res.makespan
for hd,bm,bn in ((128,64,128),(64,128,128)):
    for seq in (2048, 4096, 8192, 16384):
        heads = 2048//hd; batch = 16384//seq
        base = run(batch, heads, seq, bm, bn, 0, split=False)
        row = [f"{hd} {seq}: plain {base:.0f}"]
        for lag in (0, 66, 132, 264, 528, 1056):
            row.append(f"lag{lag} {base/run(batch, heads, seq, bm, bn, lag):.3f}")
        print(' '.join(row), flush=True)
print("small problems")
for (b,h,seq,bm,bn) in ((1,1,16384,64,128),(1,2,8192,64,128),(1,4,4096,64,128),(1,8,16384,64,128),(2,8,2048,64,128),(1,1,4096,128,128)):
    base = run(b,h,seq,bm,bn,0,split=False)
    print(b,h,seq,bm,bn, f"plain {base:.0f}", ' '.join(f"lag{l} {base/run(b,h,seq,bm,bn,l):.3f}" for l in (264,528)))
