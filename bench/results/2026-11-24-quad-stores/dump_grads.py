# Dumps dQ / dK / dV of a fixed set of calls (bf16, deterministic) so two builds can be
# compared bit for bit: python dump_grads.py OUT.pt
import os, sys, torch, dash
torch.manual_seed(0)
HD = [(64, 64), (96, 96), (128, 128), (192, 192), (192, 128), (256, 256)]
if os.environ.get("DUMP_HD"):  # e.g. "192x128,256x256"
    HD = [tuple(int(x) for x in h.split("x")) for h in os.environ["DUMP_HD"].split(",")]
MASKS = [dict(causal=False), dict(causal=True), dict(causal=True, window_size=(300, 0)), dict(causal=False, window_size=(128, 128))]
res = {}
def rnd(*s):
    return torch.randn(*s, dtype=torch.bfloat16, device="cuda")
for d, dv in HD:
    for mi, m in enumerate(MASKS):
        for (b, s, h, hkv) in [(2, 1000, 4, 4), (1, 777, 8, 2)]:
            q, k, v = rnd(b, s, h, d), rnd(b, s, hkv, d), rnd(b, s, hkv, dv)
            out, lse = dash.attn_fwd(q, k, v, deterministic=True, **m)[:2]
            do = rnd(b, s, h, dv)
            g = dash.attn_bwd(do, q, k, v, out, lse, deterministic=True, **m)
            res[f"fixed d{d}x{dv} m{mi} b{b} s{s} h{h}/{hkv}"] = [t.cpu() for t in g[:3]]
        cu = torch.tensor([0, 300, 1111, 1500], dtype=torch.int32, device="cuda")
        q, k, v = rnd(1500, 4, d), rnd(1500, 2, d), rnd(1500, 2, dv)
        out, lse = dash.attn_varlen_fwd(q, k, v, cu, cu, 811, 811, deterministic=True, **m)[:2]
        do = rnd(1500, 4, dv)
        g = dash.attn_varlen_bwd(do, q, k, v, out, lse, cu, cu, 811, 811, deterministic=True, **m)
        res[f"varlen d{d}x{dv} m{mi}"] = [t.cpu() for t in g[:3]]
torch.save(res, sys.argv[1])
print("dumped", len(res))
