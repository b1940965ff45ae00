"""Event model (dealing_model.py's) extended with a two-phase diagonal: each walk's KV tiles split at
H = N/2; a dQ tile adds block 0 (KV tiles < H) from its diagonal down, then block 1 (>= H) from its
diagonal down. Items: a walk's block 0 (last KV tile of the block first), and its block 1 `lag` walks
later, so block 1's short tasks start after block 0's long ones have passed their Q tiles."""
import heapq, sys
def run(S, bm, bn, walks, order, lag=1, G=132, link=0.6, buffers=2, ov=1.0):
    M, N, sig = S // bm, S // bn, bn // bm
    H = N // 2
    diag = lambda m: min((m * bm + bm - 1) // bn, N - 1)
    items = []
    if order == 'diagonal':
        for w in range(walks):
            for n in reversed(range(N)): items.append((w, n))
    else:
        b0 = lambda w: [(w, n) for n in reversed(range(H))]
        b1 = lambda w: [(w, n) for n in reversed(range(H, N))]
        for k in range(walks + lag):
            if k < walks: items += b0(k)
            if k - lag >= 0: items += b1(k - lag)
    def prev_rank(w, m, n):
        d = diag(m)
        if order == 'diagonal':
            return (w, m, n + 1) if n + 1 <= d else None
        if n < H:
            return (w, m, n + 1) if n + 1 <= min(d, H - 1) else None
        return (w, m, n + 1) if n + 1 <= d else (w, m, 0)
    landed = {}
    free = [(0.0, c) for c in range(G)]; heapq.heapify(free)
    busy_end = 0.0; total = 0
    for (w, n) in items:
        t, c = heapq.heappop(free); t += ov
        pend = []; issue_prev = 0.0
        for m in range((n * bn) // bm, M):
            if len(pend) >= buffers: t = max(t, pend[-buffers][0])
            t += 1.0; total += 1
            pr = prev_rank(w, m, n)
            start = max(t, issue_prev)
            if pr is not None: start = max(start, landed[pr])
            landed[(w, m, n)] = start + link; issue_prev = start + link
            pend.append((start, start + link))
        end = max(t, pend[-1][1] if pend else t)
        busy_end = max(busy_end, end); heapq.heappush(free, (end, c))
    return total / G / busy_end
for hd, bm, bn in ((128, 64, 128), (64, 128, 128)):
    for S in (2048, 4096, 8192, 16384):
        walks = (16384 // S) * (2048 // hd)
        r = [f"diag {run(S,bm,bn,walks,'diagonal'):.3f}"] + [f"halves/lag{l} {run(S,bm,bn,walks,'halves',l):.3f}" for l in (1, 2, 4)]
        print(hd, S, walks, ' '.join(r), flush=True)
