"""Event model of counter-dealt causal backward schedules (unit = one step).
Each CTA runs its task's steps back to back; step k's dQ partial goes to a writer that adds it
once the previous rank's add into that tile has landed (add takes `link` steps to land); the MMA
may run `buffers` steps ahead of its oldest pending add."""
import heapq, sys
def run(S, bm, bn, walks, order, chunk=1, G=132, link=0.6, buffers=2, ov=1.0):
    M, N, sig = S // bm, S // bn, bn // bm
    # items
    items = []
    if order == 'diagonal':
        for w in range(walks):
            for n in reversed(range(N)): items.append((w, n))
    else:  # descending, chunked KV-tile-major, longest first
        for c0 in range(0, walks, chunk):
            ws = range(c0, min(walks, c0 + chunk))
            for n in range(N):
                for w in ws: items.append((w, n))
    def walk(n):
        first = (n * bn) // bm
        return list(range(first, M)) if order == 'diagonal' else list(range(M - 1, first - 1, -1))
    # rank order per (w, m): diagonal: n from diag(m) down to 0; descending: n ascending
    landed = {}   # (w, m, n) -> time the add landed
    def prev_rank(w, m, n):
        if order == 'diagonal':
            top = (m * bm + bm - 1) // bn  # last KV tile seeing tile m
            return (w, m, n + 1) if n + 1 <= min(top, N - 1) else None
        return (w, m, n - 1) if n - 1 >= 0 else None
    # simulate tasks in item order with CTAs from a heap; a task's adds depend on earlier items only
    # (every wait targets a smaller item), so processing items in order is exact if adds of smaller
    # items are fully computed before -- true since we process whole items in order.
    free = [(0.0, c) for c in range(G)]; heapq.heapify(free)
    busy_end = 0.0; total_steps = 0
    for (w, n) in items:
        t, c = heapq.heappop(free)
        t += ov
        pend = []  # landed times of own adds, in order
        issue_prev = 0.0
        for m in walk(n):
            # buffer: can start this step only when the add from `buffers` steps ago has been issued
            if len(pend) >= buffers:
                t = max(t, pend[-buffers][0])
            t += 1.0; total_steps += 1
            pr = prev_rank(w, m, n)
            start_add = max(t, issue_prev)
            if pr is not None: start_add = max(start_add, landed[pr])
            done = start_add + link
            landed[(w, m, n)] = done
            issue_prev = done  # one writer chain per CTA (serial adds)
            pend.append((start_add, done))
        end = max(t, pend[-1][1] if pend else t)
        busy_end = max(busy_end, end)
        heapq.heappush(free, (end, c))
    ideal = total_steps / G
    return ideal / busy_end
for hd, bm, bn in ((128, 64, 128), (64, 128, 128)):
    for S in (2048, 4096, 8192, 16384):
        walks = (16384 // S) * (2048 // hd)
        r = [f"diag {run(S,bm,bn,walks,'diagonal'):.3f}"]
        for ch in (1, 2, 4, 8, walks):
            r.append(f"desc/{ch} {run(S,bm,bn,walks,'descending',ch):.3f}")
        print(hd, S, walks, ' '.join(r), flush=True)
