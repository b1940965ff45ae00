"""Session 45, call 4: hdim 256 causal backward, det, per schedule (final's library), steady state:
2 s untimed, then >= 1 s timed, median call. 16k tokens a call (batch = 16384 / seqlen), 8 heads.
The plan of each (dash.attn_bwd_plan) is printed beside it: where the gap to FA3 at causal 16k sits."""
import sys, time, torch
sys.path.insert(0, ".")
import dash
from dash import ops
torch.manual_seed(0)
for seqlen in (8192, 16384):
    b, h, d = 16384 // seqlen, 8, 256
    q, k, v, do = (torch.randn(b, seqlen, h, d, device="cuda", dtype=torch.bfloat16) for _ in range(4))
    out, lse = ops.attn_fwd(q, k, v, causal=True)[:2]
    flops = 2.5 * 4 * b * h * seqlen * seqlen * d / 2
    for sched in ("auto", "diagonal", "ascending", "descending", "shift", "symmetric_shift"):
        for det in ((True, False) if sched == "auto" else (True,)):
            try:
                plan = ops.attn_bwd_plan(q, k, causal=True, deterministic=det, schedule=sched)
                fn = lambda: ops.attn_bwd(do, q, k, v, out, lse, causal=True, deterministic=det, schedule=sched)
                t0 = time.time()
                while time.time() - t0 < 2.0: fn()
                torch.cuda.synchronize()
                times = []
                t0 = time.time()
                while time.time() - t0 < 1.0 or len(times) < 30:
                    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    s.record(); fn(); e.record(); e.synchronize(); times.append(s.elapsed_time(e))
                times.sort(); ms = times[len(times) // 2]
                print(f"{seqlen:6d} {sched:16s} det={det!s:5s} {flops / ms / 1e9:7.1f} TFLOPS  plan {plan}", flush=True)
            except Exception as exc:  # noqa: BLE001
                print(f"{seqlen:6d} {sched:16s} det={det!s:5s} error {type(exc).__name__}: {exc}"[:300], flush=True)
