from dash.schedule import BwdScheduleView, DIAGONAL, SYMMETRIC_SHIFT, BwdTask
from dash.schedule_sim import simulate
import dash.schedule as S_
orig = BwdScheduleView.task
def task(self, item, member):
    if self.schedule == DIAGONAL and self.chunk > 1:
        walks = self.units() * self.batch
        w = min(self.chunk, walks)
        index, rest = divmod(item, w * self.num_n_blocks)
        first = index * w
        width = min(walks - first, w)
        p, within = divmod(rest, width)
        n_block = self.num_n_blocks - 1 - p
        bh = first + within
        batch, unit = divmod(bh, self.units())
        kv_head, part = divmod(unit, self.parts)
        return BwdTask(item, member, n_block, kv_head, batch, self.tiles(), part)
    return orig(self, item, member)
BwdScheduleView.task = task
for S in (2048, 4096, 8192):
    b = 16384 // S
    def run(sched, p, counter, chunk=1, h=32, hkv=8):
        v = BwdScheduleView.for_problem(b, h, S, S, 64, 128, True, sched, 132, hkv, p, chunk)
        g = h // hkv // p
        return simulate(v, 1.0, 0.5, handoff=0.5, bytes_per_head=4.0 * S * 128 * g, miss_cost=0.3, counter=counter).makespan
    base = run(SYMMETRIC_SHIFT, 1, False)
    out = [f"S={S}"]
    for p in (1, 2):
        for c in (1, 2, 4, 8, 16, 64):
            out.append(f"p{p}c{c} {base/run(DIAGONAL, p, True, c):.3f}")
    print(" ".join(out), flush=True)
    base = run(SYMMETRIC_SHIFT, 1, False, 1, 16, 16)
    print("  MHA", " ".join(f"c{c} {base/run(DIAGONAL, 1, True, c, 16, 16):.3f}" for c in (1, 2, 4, 8)), flush=True)
