"""Forward band kernel under tile-order variants (env knobs of an experiment build): near-full window and causal."""
import os, sys, time, torch
sys.path.insert(0, os.getcwd())
from dash.flash_attn_interface import flash_attn_func as f
def pairs(S, left, right):
    i = torch.arange(S, device="cuda").view(-1, 1); j = torch.arange(S, device="cuda").view(1, -1)
    ok = torch.ones(S, S, dtype=torch.bool, device="cuda")
    if left >= 0: ok &= j >= i - left
    if right >= 0: ok &= j <= i + right
    return int(ok.sum())
variants = {"default": {}, "sec64MB": {"DASH_L2_SECTION_MB": "64"}, "sec128MB": {"DASH_L2_SECTION_MB": "128"},
            "sec1GB": {"DASH_L2_SECTION_MB": "1024"}, "sec16MB": {"DASH_L2_SECTION_MB": "16"}}
def run(g, flops):
    t0 = time.time()
    while time.time() - t0 < 1.2: g()
    torch.cuda.synchronize()
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(2)]
    ev[0].record(); n = 0; t0 = time.time()
    while time.time() - t0 < 0.8: g(); n += 1
    ev[1].record(); torch.cuda.synchronize()
    return flops / (ev[0].elapsed_time(ev[1]) / n) / 1e9
print("| hdim | seqlen | shape | " + " | ".join(variants) + " |")
for hd in (128, 64):
    for S in (2048, 4096, 16384) if hd == 128 else (2048, 16384):
        B = 16384 // S; H = 2048 // hd
        q, k, v = (torch.randn(B, S, H, hd, device="cuda", dtype=torch.bfloat16) for _ in range(3))
        shapes = [("causal", True, (-1, -1))] + ([("window (4096,0)", True, (4096, 0))] if S == 16384 and hd == 128 else [])
        for name, causal, win in shapes:
            l, r = (win[0], 0) if causal else win
            fl = 4 * B * H * pairs(S, l, r) * hd
            row = []
            for var, env in variants.items():
                for key in ("DASH_L2_SECTION_MB", "DASH_FWD_PLAIN_ORDER"): os.environ.pop(key, None)
                os.environ.update(env)
                row.append(run(lambda: f(q, k, v, causal=causal, window_size=win), fl))
            print(f"| {hd} | {S} | {name} | " + " | ".join(f"{x:.1f}" for x in row) + " |", flush=True)
