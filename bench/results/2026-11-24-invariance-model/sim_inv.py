"""Issue 14 exploration: shift with head-local groups of V items (a function of the shape
alone), CTAs dealt whole groups per round, against today's round-defined groups."""
import sys, dataclasses
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[3]))
from dash.schedule import BwdScheduleView, ItemGroup, SHIFT, ASCENDING, applies
from dash.schedule_sim import simulate, Deadlock
from dash._traits import BWD_TILE

@dataclasses.dataclass(frozen=True)
class FixedGroupShift(BwdScheduleView):
    V: int = 8
    def groups_per_head(self):
        return -(-self.items_per_head() // self.V)
    def groups_per_round(self):
        return max(self.grid // self.V, 1)
    def num_rounds(self):
        total = self.groups_per_head() * self.units() * self.batch
        return max(-(-total // self.groups_per_round()), -(-self.num_items() // self.grid))
    def item_id(self, cta, round_):
        if cta >= self.groups_per_round() * self.V and self.grid >= self.V:
            return -1
        gidx, member = divmod(cta, self.V) if self.grid >= self.V else (0, cta)
        g = round_ * self.groups_per_round() + gidx
        head, gl = divmod(g, self.groups_per_head())
        if head >= self.units() * self.batch:
            return -1
        local = gl * self.V + member
        if local >= self.items_per_head() or local >= (gl + 1) * self.V:
            return -1
        return head * self.items_per_head() + local
    def item_group(self, task):
        local = task.item % self.items_per_head()
        first = (local // self.V) * self.V
        return ItemGroup(first, min(self.V, self.items_per_head() - first))

def run(hd, seqlen, causal=False, grid=132, reduce=0.3, handoff=0.3):
    bm, bn = BWD_TILE[(hd, hd)]
    batch, heads = 16384 // seqlen, 2048 // hd
    out = {}
    for name, mk in [("ascending", lambda: BwdScheduleView.for_problem(batch, heads, seqlen, seqlen, bm, bn, causal, ASCENDING, grid)),
                     ("shift", lambda: BwdScheduleView.for_problem(batch, heads, seqlen, seqlen, bm, bn, causal, SHIFT, grid))]:
        v = mk(); out[name] = simulate(v, 1.0, reduce, handoff=handoff).makespan
    base = BwdScheduleView.for_problem(batch, heads, seqlen, seqlen, bm, bn, causal, SHIFT, grid)
    nondet = simulate(base, 1.0, reduce, deterministic=False).makespan
    I = base.items_per_head()
    for V in sorted({8, 16, 32, I}):
        if V > I or V > grid: continue  # a group must be co-resident
        fv = FixedGroupShift(**{f.name: getattr(base, f.name) for f in dataclasses.fields(BwdScheduleView)}, V=V)
        try:
            out[f"V={V}"] = simulate(fv, 1.0, reduce, handoff=handoff).makespan
        except Deadlock:
            out[f"V={V}"] = float("nan")
    return nondet, out

for hd, seqlen in [(128, 2048), (128, 4096), (128, 8192), (128, 16384), (64, 4096), (64, 16384)]:
    for grid in (132, 112, 31):
        nondet, out = run(hd, seqlen, grid=grid)
        print(f"hd {hd} S {seqlen:5d} grid {grid:3d} nondet {nondet:7.1f} " + " ".join(f"{k} {v / nondet:.3f}" for k, v in out.items()))
