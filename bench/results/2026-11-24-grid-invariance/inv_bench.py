"""Issue 14 gate: fixed-length auto (shift / symmetric shift) vs invariant candidates that exist
today: the fixed-length common orders (ascending full, descending / diagonal causal) and the
packed path on equal lengths (counter-dealt, ascending sequence-tile-major / diagonal)."""
import sys, pathlib, torch
ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT)); sys.path.insert(0, str(ROOT / "bench"))
import dash
from bench_bwd import Problem, time_ms

def varlen_fn(p):
    B, S, H, D = p.q.shape
    q, k, v, do = (t.reshape(B * S, t.shape[2], t.shape[3]) for t in (p.q, p.k, p.v, p.dout))
    cu = torch.arange(0, (B + 1) * S, S, device="cuda", dtype=torch.int32)
    out, lse = dash.attn_varlen_fwd(q, k, v, cu, cu, S, S, causal=p.causal, deterministic=True)
    def run():
        dash.attn_varlen_bwd(do, q, k, v, out, lse, cu, cu, S, S, causal=p.causal, deterministic=True)
    plan = dash.attn_varlen_bwd_plan(q, k, cu, cu, S, S, p.causal, True)
    return run, plan

hds = [int(x) for x in sys.argv[1].split(",")] if len(sys.argv) > 1 else [64, 128]
seqs = [int(x) for x in sys.argv[2].split(",")] if len(sys.argv) > 2 else [2048, 4096, 8192, 16384]
for hd in hds:
    for S in seqs:
        for causal in (False, True):
            p = Problem(S, hd, causal, 16384, 2048)
            fns = {"nondet": p.dash_fn(False), "auto": p.dash_fn(True)}
            if causal:
                fns["descending"] = p.dash_fn(True, "descending")
                fns["diagonal"] = p.dash_fn(True, "diagonal")
            else:
                fns["ascending"] = p.dash_fn(True, "ascending")
            fns["varlen"], plan = varlen_fn(p)
            res = {name: p.flops / (time_ms(fn, 30, 2.0, 1.0) * 1e-3) / 1e12 for name, fn in fns.items()}
            base = res["auto"]
            print(f"{hd:4d} {S:6d} {'causal' if causal else 'full':6s} " +
                  " ".join(f"{n} {t:6.1f} ({t / base:.3f})" for n, t in res.items()) + f"  [{plan['schedule']}]", flush=True)
