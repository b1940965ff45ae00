"""Item 105's two-phase diagonal model (2026-11-25-bwd-trace-and-tail/dealing_model_halves.py) with the split
H = HF x N as a parameter, the best lag of 2-16 walks per point (RESULTS.md item 176; model only)."""
import sys, importlib.util, time
sys.argv=['x']
src = open(__import__('pathlib').Path(__file__).resolve().parents[1].as_posix() + '/2026-11-25-bwd-trace-and-tail/dealing_model_halves.py').read()
src = src.split("for hd, bm, bn in")[0]
# generalize H
src = src.replace("H = N // 2", "H = max(1, int(N * HF))").replace("def run(S, bm, bn, walks, order, lag=1, G=132, link=0.6, buffers=2, ov=1.0):", "def run(S, bm, bn, walks, order, lag=1, G=132, link=0.6, buffers=2, ov=1.0, HF=0.5):")
ns = {}; exec(src, ns); run = ns['run']
t=time.time()
for hd, bm, bn in ((128, 64, 128), (64, 128, 128)):
    for S in (4096, 8192, 16384):
        walks = (16384 // S) * (2048 // hd)
        base = run(S,bm,bn,walks,'diagonal')
        res = []
        for hf in (0.35, 0.5, 0.65):
            best = max((run(S,bm,bn,walks,'halves',l,HF=hf), l) for l in (2, 4, 8, 16) if l <= walks)
            res.append(f"H={hf}: {best[0]:.3f}/lag{best[1]} ({(best[0]/base-1)*100:+.1f}%)")
        print(hd, S, walks, f"diag {base:.3f}", ' '.join(res), f"{time.time()-t:.0f}s", flush=True)
