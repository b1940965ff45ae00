"""Long sequences (64k-128k tokens, few heads): are dash's forward and backward still right there?
The test files stop at a few thousand tokens; index math over 1024-2048 Q tiles a head, long counter-
dealt walks and big workspaces are not exercised by them. Per case: out and LSE of sampled query rows,
dQ of the same rows and dK / dV of sampled key rows against an fp64 reference computed for those rows
alone (the reference's LSE for the column checks is dash's own, checked first), the deterministic
backward run twice (torch.equal) and against the non-deterministic one. From the repository root:
  PYTHONPATH=$PWD python3 bench/results/2026-11-30-s34/long_check.py"""
import math
import sys

import torch

import dash

torch.manual_seed(0)
CASES = [  # batch, seqlen, heads, heads_kv, head_dim, causal
    (1, 65536, 4, 4, 128, True),
    (1, 131072, 2, 2, 128, True),
    (1, 65536, 8, 2, 128, True),
    (1, 65536, 2, 2, 64, False),
    (1, 65536, 4, 4, 64, True),
    (1, 32768, 2, 2, 256, True),
]
failed = 0


def rel(a, b):
    return ((a.double() - b.double()).abs().max() / b.double().abs().max().clamp_min(1e-30)).item()


for batch, seqlen, heads, heads_kv, d, causal in CASES:
    dev = "cuda"
    q = torch.randn(batch, seqlen, heads, d, device=dev, dtype=torch.bfloat16)
    k = torch.randn(batch, seqlen, heads_kv, d, device=dev, dtype=torch.bfloat16)
    v = torch.randn(batch, seqlen, heads_kv, d, device=dev, dtype=torch.bfloat16)
    dout = torch.randn(batch, seqlen, heads, d, device=dev, dtype=torch.bfloat16)
    scale = 1.0 / math.sqrt(d)
    out, lse = dash.attn_fwd(q, k, v, causal=causal)
    g1 = dash.attn_bwd(dout, q, k, v, out, lse, causal=causal, deterministic=True)
    g2 = dash.attn_bwd(dout, q, k, v, out, lse, causal=causal, deterministic=True)
    gn = dash.attn_bwd(dout, q, k, v, out, lse, causal=causal, deterministic=False)
    torch.cuda.synchronize()
    bitwise = all(torch.equal(a, b) for a, b in zip(g1, g2))
    det_vs_nondet = max(rel(a, b) for a, b in zip(g1, gn))
    rows = torch.cat([torch.arange(0, 8), torch.arange(seqlen // 2 - 4, seqlen // 2 + 4), torch.arange(seqlen - 16, seqlen),
                      torch.randint(0, seqlen, (16,))]).to(dev)
    cols = torch.cat([torch.arange(0, 8), torch.arange(seqlen // 2 - 4, seqlen // 2 + 4), torch.arange(seqlen - 8, seqlen),
                      torch.randint(0, seqlen, (8,))]).to(dev)
    errs = {"out": 0.0, "lse": 0.0, "dq": 0.0, "dk": 0.0, "dv": 0.0}
    group = heads // heads_kv
    for h in range(heads):
        hk = h // group
        qh, kh, vh, doh = (x[0, :, i].double() for x, i in ((q, h), (k, hk), (v, hk), (dout, h)))
        oh = out[0, :, h].double()
        # rows: out, LSE, dQ
        s = (qh[rows] @ kh.T) * scale
        if causal:
            s = s.masked_fill(torch.arange(seqlen, device=dev)[None, :] > rows[:, None], float("-inf"))
        lse_ref = torch.logsumexp(s, dim=1)
        p = torch.exp(s - lse_ref[:, None])
        o_ref = p @ vh
        dp = doh[rows] @ vh.T
        D = (doh[rows] * oh[rows]).sum(1)
        ds = p * (dp - D[:, None])
        dq_ref = (ds @ kh) * scale
        errs["out"] = max(errs["out"], rel(out[0, rows, h], o_ref))
        errs["lse"] = max(errs["lse"], (lse[0, h, rows].double() - lse_ref).abs().max().item())
        errs["dq"] = max(errs["dq"], rel(g1[0][0, rows, h], dq_ref))
    # columns: dK / dV summed over the group's query heads, with dash's LSE (checked above)
    for hk in range(heads_kv):
        dk_ref = torch.zeros(len(cols), d, device=dev, dtype=torch.float64)
        dv_ref = torch.zeros_like(dk_ref)
        for h in range(hk * group, (hk + 1) * group):
            qh, doh, oh = q[0, :, h].double(), dout[0, :, h].double(), out[0, :, h].double()
            kc, vc = k[0, cols, hk].double(), v[0, cols, hk].double()
            s = (qh @ kc.T) * scale
            if causal:
                s = s.masked_fill(cols[None, :] > torch.arange(seqlen, device=dev)[:, None], float("-inf"))
            p = torch.exp(s - lse[0, h].double()[:, None])
            D = (doh * oh).sum(1)
            ds = p * (doh @ vc.T - D[:, None])
            dv_ref += p.T @ doh
            dk_ref += (ds.T @ qh) * scale
        errs["dk"] = max(errs["dk"], rel(g1[1][0, cols, hk], dk_ref))
        errs["dv"] = max(errs["dv"], rel(g1[2][0, cols, hk], dv_ref))
    ok = bitwise and det_vs_nondet < 2e-2 and errs["lse"] < 1e-3 and all(errs[x] < 2e-2 for x in ("out", "dq", "dk", "dv"))
    failed += not ok
    print(f"batch {batch} seqlen {seqlen} heads {heads}/{heads_kv} d {d} causal {causal}: bitwise {bitwise}, "
          f"det vs non-det {det_vs_nondet:.2e}, " + ", ".join(f"{k_} {v_:.2e}" for k_, v_ in errs.items())
          + ("" if ok else "  <-- FAIL"), flush=True)
    del q, k, v, dout, out, lse, g1, g2, gn
    torch.cuda.empty_cache()
print("FAILED cases:", failed)
sys.exit(1 if failed else 0)
