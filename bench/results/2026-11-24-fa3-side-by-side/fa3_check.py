"""Sanity: FA3 peer and dash agree (out and grads) on a few shapes, so the side-by-side times the same math."""
import torch, flash_attn_interface as fa3
from dash import flash_attn_interface as dash
torch.manual_seed(0)
for (hd, hdv, causal) in [(128, 128, False), (128, 128, True), (64, 64, True), (192, 128, True)]:
    B, S, H = 2, 1000, 4
    q = torch.randn(B, S, H, hd, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    k = torch.randn(B, S, H, hd, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    v = torch.randn(B, S, H, hdv, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    do = torch.randn(B, S, H, hdv, device="cuda", dtype=torch.bfloat16)
    res = []
    for f in (lambda: dash.flash_attn_func(q, k, v, causal=causal, deterministic=True),
              lambda: fa3.flash_attn_func(q, k, v, causal=causal)):
        o = f(); o = o[0] if isinstance(o, tuple) else o
        g = torch.autograd.grad(o, (q, k, v), do)
        res.append((o,) + g)
    err = [((a.float() - b.float()).abs().max() / b.float().abs().max()).item() for a, b in zip(*res)]
    print(f"hd {hd}x{hdv} causal {causal}: rel max diff out/dq/dk/dv " + " ".join(f"{e:.1e}" for e in err), flush=True)
