"""Item 184: the deterministic causal backward's diagonal order with each walk cut into row bands
at fixed Q-tile rows (`cuts`), as an event model: CTAs draw items from a counter (a head's items
consecutive, its last KV tile first, each walk's bands upper first), a step computes for 1 (plus
`part_cost` on the last step of a band of a cut walk: its fp32 dK / dV partial) and adds its dQ
partial for `reduce` once the tile's previous rank has landed (+ `handoff` when it had to wait).
Prints makespan ratios diagonal / cut for the usual grid's shapes. Run: python3 walk_split_model.py"""
import heapq
def run(H, M, N, sigma, grid=132, reduce=0.3, cuts=(), handoff=0.0, lookahead=2, part_cost=0.0):
    items = []
    for h in range(H):
        for n in range(N - 1, -1, -1):
            lo, hi = n * sigma, M
            b = sorted(set([lo] + [c for c in cuts if lo < c < hi] + [hi]))
            for k in range(len(b) - 2, -1, -1):
                items.append((h, n, b[k], b[k + 1], len(b) > 2))
    def steps_of(it):
        h, n, lo, hi, split = it
        s = [((h, m), (m // sigma) - n, 1.0) for m in range(lo, hi)]
        if split and part_cost:
            k, r, c = s[-1]; s[-1] = (k, r, c + part_cost)
        return s
    nxt = 0; prog = [[] for _ in range(grid)]; draw_at = [-1] * grid
    def draw(c):
        nonlocal nxt
        if nxt < len(items):
            s = steps_of(items[nxt]); nxt += 1
            draw_at[c] = len(prog[c]) + max(0, len(s) - lookahead); prog[c].extend(s)
    for c in range(grid): draw(c)
    for c in range(grid):
        if draw_at[c] == 0: draw(c)
    pos = [0] * grid; fin = [0.0] * grid; added = {}; free = {}; parked = {}
    ready = [(prog[c][0][2], c) for c in range(grid) if prog[c]]; heapq.heapify(ready)
    def do(c, t):
        while True:
            key, rank, _ = prog[c][pos[c]]
            f = free.get(key, 0.0); st = f + handoff if f > t else t; end = st + reduce
            free[key] = end; added[key] = added.get(key, 0) + 1; pos[c] += 1; fin[c] = end
            if pos[c] == draw_at[c]: draw(c)
            if pos[c] < len(prog[c]): heapq.heappush(ready, (end + prog[c][pos[c]][2], c))
            nx = parked.pop((key, added[key]), None)
            if nx is None: return
            c, t = nx
    while ready:
        t, c = heapq.heappop(ready); key, rank, _ = prog[c][pos[c]]
        if added.get(key, 0) == rank: do(c, t)
        else: parked[(key, rank)] = (c, t)
    assert all(pos[c] == len(prog[c]) for c in range(grid))
    return max(fin)
# hdim 128 (64 x 128 tiles, sigma 2) and hdim 64 (128 x 128, sigma 1); 16k tokens, 2048 hidden
cases = {"128 16k": (16, 256, 128, 2), "128 8k": (32, 128, 64, 2), "128 4k": (64, 64, 32, 2),
         "64 16k": (32, 128, 128, 1), "64 8k": (64, 64, 64, 1)}
for name, (H, M, N, sig) in cases.items():
    out = [name]
    for ho in (0.0, 0.5, 1.0):
        base = run(H, M, N, sig, handoff=ho)
        r = [f"ho{ho}: diag {base:.0f}"]
        for label, cuts in [("M/2", (M // 2,)), ("M/4s", (M // 4, M // 2, 3 * M // 4)), ("3M/4", (3 * M // 4,)), ("M/2,3M/4", (M // 2, 3 * M // 4))]:
            for pc in (0.0, 2.0):
                ms = run(H, M, N, sig, cuts=cuts, handoff=ho, part_cost=pc)
                r.append(f"{label}/pc{pc:g} {base/ms:.3f}")
        out.append(" ".join(r))
    print("\n   ".join(out), flush=True)
