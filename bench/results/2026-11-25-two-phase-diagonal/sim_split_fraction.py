# Model of the split fraction H / N at lag 528; needs two_phase_diagonal.patch applied.
import dash.schedule as S
from dash.schedule import BwdScheduleView, DIAGONAL
from dash.schedule_sim import simulate
def run(batch, heads, seq, bm, bn, lag, frac, grid=132, r=0.3, h=0.5):
    S.diagonal_split = (lambda t: int(t.num_n_blocks() * frac)) if frac else (lambda t: 0)
    v = BwdScheduleView.for_problem(batch, heads, seq, seq, bm, bn, True, DIAGONAL, grid, lag=lag)
    return simulate(v, 1.0, r, handoff=h, counter=True).makespan
cases = [(16384//s, 2048//hd, s, bm, bn) for hd,bm,bn in ((128,64,128),(64,128,128)) for s in (2048, 4096, 16384)]
cases += [(1,1,16384,64,128),(1,4,4096,64,128),(1,8,16384,64,128),(1,1,4096,128,128)]
for c in cases:
    base = run(*c, 0, 0)
    print(c, ' '.join(f"f{f}:{base/run(*c, 528, f):.3f}" for f in (0.5, 0.625, 0.75, 0.875)), flush=True)
