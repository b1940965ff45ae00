"""Issue 14: (chunk) DASH_DEAL_CHUNK sweep of det auto on full masks; (grid) det auto (invariant)
vs the grid-dependent opt-in (shift / symmetric_shift) vs non-det, same job, steady state."""
import os, sys, pathlib, torch
ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT)); sys.path.insert(0, str(ROOT / "bench"))
import dash
from bench_bwd import Problem, time_ms

mode = sys.argv[1]
hds = [int(x) for x in sys.argv[2].split(",")]
seqs = [int(x) for x in sys.argv[3].split(",")]
masks = sys.argv[4].split(",") if len(sys.argv) > 4 else ["full", "causal"]
heads_kv = int(sys.argv[5]) if len(sys.argv) > 5 else 0
hidden = int(sys.argv[6]) if len(sys.argv) > 6 else 2048

def parts_env(v):
    os.environ.pop("DASH_KV_PARTS", None)
    if v: os.environ["DASH_KV_PARTS"] = str(v)

def tf(p, fn, env=None):
    os.environ.pop("DASH_DEAL_CHUNK", None)
    if env: os.environ["DASH_DEAL_CHUNK"] = str(env)
    r = p.flops / (time_ms(fn, 30, 2.0, 1.0) * 1e-3) / 1e12
    os.environ.pop("DASH_DEAL_CHUNK", None)
    return r

for hd in hds:
    for S in seqs:
        for m in masks:
            causal = m == "causal"
            p = Problem(S, hd, causal, 16384, hidden, **({"heads_kv": heads_kv} if heads_kv else {}))
            res = {}
            if mode == "chunk":
                res["shift"] = tf(p, p.dash_fn(True, "shift"))
                res["auto"] = tf(p, p.dash_fn(True))
                for c in [int(x) for x in os.environ.get("CHUNKS", "1,2,4,8,16,32,64,128").split(",")]:
                    res[f"c{c}"] = tf(p, p.dash_fn(True), c)
                base = res["shift"]
            elif mode == "quick":
                opt = "symmetric_shift" if causal else "shift"
                res["nondet"] = tf(p, p.dash_fn(False))
                res[opt] = tf(p, p.dash_fn(True, opt))
                res["auto"] = tf(p, p.dash_fn(True))
                base = res[opt]
            elif mode == "parts":
                opt = "symmetric_shift" if causal else "shift"
                parts_env(int(os.environ.get("OLD_PARTS", "1")))
                res[opt] = tf(p, p.dash_fn(True, opt))
                for q in [int(x) for x in os.environ.get("PARTS", "1,2,4").split(",")]:
                    parts_env(q)
                    res[f"p{q}"] = tf(p, p.dash_fn(True))
                parts_env(None)
                base = res[opt]
            elif mode == "gqa":
                opt = "symmetric_shift" if causal else "shift"
                res["nondet"] = tf(p, p.dash_fn(False))
                res["auto"] = tf(p, p.dash_fn(True))
                parts_env(int(os.environ.get("OLD_PARTS", "1")))
                res[opt + "_p1"] = tf(p, p.dash_fn(True, opt))
                parts_env(None)
                base = res[opt + "_p1"]
            else:
                opt = "symmetric_shift" if causal else "shift"
                res["nondet"] = tf(p, p.dash_fn(False))
                res[opt] = tf(p, p.dash_fn(True, opt))
                ch = None
                res["auto"] = tf(p, p.dash_fn(True), ch)
                res["auto2"] = tf(p, p.dash_fn(True), ch)
                res[opt + "2"] = tf(p, p.dash_fn(True, opt))
                base = (res[opt] + res[opt + "2"]) / 2
            pl = dash.attn_bwd_plan(p.q, p.k, causal=causal, deterministic=True)
            print(f"{hd:4d} {S:6d} {m:6s} " + " ".join(f"{n} {t:6.1f} ({t / base:.3f})" for n, t in res.items())
                  + f"  [{pl['schedule']} chunk {pl.get('deal_chunk')} parts {pl.get('kv_parts')}]", flush=True)
