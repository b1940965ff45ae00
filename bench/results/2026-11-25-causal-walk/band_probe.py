"""Band kernel with a nearly full window against the full kernel (same steps), and causal, hdim 128/64."""
import os, sys, time, torch
sys.path.insert(0, os.getcwd())
from dash.flash_attn_interface import flash_attn_func as f
def pairs(S, left, right):
    i = torch.arange(S, device="cuda").view(-1, 1); j = torch.arange(S, device="cuda").view(1, -1)
    ok = torch.ones(S, S, dtype=torch.bool, device="cuda")
    if left >= 0: ok &= j >= i - left
    if right >= 0: ok &= j <= i + right
    return int(ok.sum())
for hd in (128, 64):
    for S in (4096, 16384):
        B = 16384 // S; H = 2048 // hd
        q, k, v = (torch.randn(B, S, H, hd, device="cuda", dtype=torch.bfloat16) for _ in range(3))
        for name, causal, win in [("full", False, (-1, -1)), ("band ~full (S-2,S-2)", False, (S - 2, S - 2)),
                                  ("causal", True, (-1, -1)), ("band (S-2,0)", False, (S - 2, 0)),
                                  ("full", False, (-1, -1))]:
            g = lambda: f(q, k, v, causal=causal, window_size=win)
            t0 = time.time()
            while time.time() - t0 < 1.5: g()
            torch.cuda.synchronize()
            ev = [torch.cuda.Event(enable_timing=True) for _ in range(2)]
            ev[0].record(); n = 0; t0 = time.time()
            while time.time() - t0 < 1.0: g(); n += 1
            ev[1].record(); torch.cuda.synchronize()
            ms = ev[0].elapsed_time(ev[1]) / n
            l, r = (-1, 0) if causal else win
            flops = 4 * B * H * pairs(S, l, r) * hd
            print(f"hdim {hd} S {S} {name:22s} {ms:8.3f} ms {flops / ms / 1e9:7.1f} TFLOPS", flush=True)
