import sys, types
from dash.schedule import QWalk, BwdScheduleView, BwdTask, TaskRanks, ItemGroup, ASCENDING, DIAGONAL
from dash.schedule_sim import simulate
def make(bm,bn,seqlen,heads,batch):
    import os
    from dash.geometry import MaskWindow
    mask = MaskWindow(int(os.environ["WIN"]), 0) if "WIN" in os.environ else True
    return BwdScheduleView.for_problem(batch, heads, seqlen, seqlen, bm, bn, mask, "diagonal", 132)
def custom(v, order, asc_walks, desc_walks=()):
    """order: list of (bh, n_block) in dealing order; asc_walks: set of bh using ascending ranks."""
    def task(self, item, member):
        bh, n = order[item]
        batch, unit = divmod(bh, self.units())
        return BwdTask(item, member, n, unit, batch, self.tiles(), 0)
    def task_ranks(self, t):
        bh = t.batch * self.units() + t.kv_head
        sched = ASCENDING if bh in asc_walks else DIAGONAL
        return TaskRanks(sched, t.n_block, t.member, 0, 1, t.n_block, max(self.sigma(),1), 0, self.num_n_blocks, t.tiles)
    orig_walk = v.q_walk
    def q_walk(self, t):
        bh = t.batch * self.units() + t.kv_head
        if bh in desc_walks:
            return QWalk(0, 0, max(t.tiles.num_m_blocks(), 1), 0, t.tiles.m_block_end(t.n_block) - 1, -1)
        return orig_walk(t)
    object.__setattr__(v, "q_walk", types.MethodType(q_walk, v))
    object.__setattr__(v, "task", types.MethodType(task, v))
    object.__setattr__(v, "task_ranks", types.MethodType(task_ranks, v))
    return v
def diag_seq(bh, N): return [(bh, N-1-p) for p in range(N)]
def asc_seq(bh, N): return [(bh, p) for p in range(N)]
def merge(a, b, ra=1, rb=1):
    out=[]; i=j=0
    while i<len(a) or j<len(b):
        for _ in range(ra):
            if i<len(a): out.append(a[i]); i+=1
        for _ in range(rb):
            if j<len(b): out.append(b[j]); j+=1
    return out
def run(bm,bn,seqlen,heads,batch, variant, reduce=0.3, handoff=0.3):
    v = make(bm,bn,seqlen,heads,batch); N = v.num_n_blocks; W = heads*batch
    asc=set(); desc=set()
    if variant == "diag":
        order = sum((diag_seq(h,N) for h in range(W)), [])
    elif variant.startswith("lastasc"):   # last k walks ascending, dealt after the diagonal ones
        k = int(variant[7:]); asc = set(range(W-k, W))
        order = sum((diag_seq(h,N) for h in range(W-k)), []) + sum((asc_seq(h,N) for h in range(W-k, W)), [])
    elif variant.startswith("mergeasc"):  # last k asc walks merged 1:1 into the last k diag walks
        k = int(variant[8:]); asc = set(range(W-k, W))
        d = sum((diag_seq(h,N) for h in range(W-2*k, W-k)), []); a = sum((asc_seq(h,N) for h in range(W-k, W)), [])
        order = sum((diag_seq(h,N) for h in range(W-2*k)), []) + merge(d, a)
    elif variant == "altpairs":  # every pair: diag head merged with asc head
        order=[]
        for h in range(0, W, 2):
            asc.add(h+1); order += merge(diag_seq(h,N), asc_seq(h+1,N))
    elif variant.startswith("lastdesc"):
        k = int(variant[8:]); asc = set(range(W-k, W)); desc = asc
        order = sum((diag_seq(h,N) for h in range(W-k)), []) + sum((asc_seq(h,N) for h in range(W-k, W)), [])
    elif variant.startswith("tail"):   # rule: T = min(W, ceil(items / N)), optionally T <= W // 2 ("half")
        items = int(variant[4:].rstrip("h")); k = min(W, -(-items // N))
        if variant.endswith("h"): k = min(k, W // 2)
        asc = set(range(W-k, W)); desc = asc
        order = sum((diag_seq(h,N) for h in range(W-k)), []) + [(h, n) for n in range(N) for h in range(W-k, W)]
    elif variant.startswith("alldesc"):   # every walk descending, chunks of c walks interleaved (n slowest within a chunk)
        c = int(variant[7:]); asc = set(range(W)); desc = asc
        order = []
        for f in range(0, W, c):
            hs = range(f, min(W, f + c)); order += [(h, n) for n in range(N) for h in hs]
    elif variant.startswith("ilvdesc"):   # last k walks descending, interleaved with each other (n slowest)
        k = min(int(variant[7:]), W); asc = set(range(W-k, W)); desc = asc
        order = sum((diag_seq(h,N) for h in range(W-k)), []) + [(h, n) for n in range(N) for h in range(W-k, W)]
    v = custom(v, order, asc, desc)
    assert len(order) == v.num_items()
    import os
    mc=float(os.environ.get('MISS','0')); hd=int(os.environ.get('HD','128'))
    r = simulate(v, 1.0, reduce, deterministic=True, handoff=handoff, counter=True, bytes_per_head=4.0*seqlen*hd, miss_cost=mc)
    total = sum(v.num_steps(v.task(i,0)) for i in range(v.num_items()))
    return r.makespan / (1.3*total/132), r.stall/132/ (1.3*total/132)
import os
shapes = eval(os.environ["SHAPES"]) if "SHAPES" in os.environ else [(64,128,16384,16,1),(64,128,8192,16,2),(64,64*3//2,16384,10,1),(64,128,4096,16,4)]
variants = sys.argv[1:] or ["diag","lastasc1","lastasc2","mergeasc1","mergeasc2","altpairs"]
for s in shapes:
    print(s, " ".join("%s %.3f/%.3f" % ((vv,)+run(*s, vv)) for vv in variants), flush=True)
