"""FA3's softcap against dash's and the fp64 reference, before timing them side by side: the same
definition (softcap * tanh(score * scale / softcap)) gives outputs within bf16 noise of each other."""
import torch
import flash_attn_interface as fa3
import dash
from dash import reference

for hdim in (64, 128):
    for causal in (False, True):
        g = torch.Generator(device="cuda").manual_seed(hdim + causal)
        q, k, v = [(2 * torch.randn(2, 1999, 8, hdim, generator=g, device="cuda")).to(torch.bfloat16) for _ in range(3)]
        out_d, _ = dash.attn_fwd(q, k, v, causal=causal, softcap=30.0)
        out_f = fa3.flash_attn_func(q, k, v, causal=causal, softcap=30.0)
        out_f = out_f[0] if isinstance(out_f, tuple) else out_f
        ref, _ = reference.attention_forward(q.double(), k.double(), v.double(), causal=causal, softcap=30.0,
                                             compute_dtype=torch.float64)
        line = f"hdim {hdim} causal {causal}: |dash - fa3| max {(out_d.float() - out_f.float()).abs().max().item():.3e}"
        line += (f", |dash - ref| {(out_d.double() - ref).abs().max().item():.3e}"
                f", |fa3 - ref| {(out_f.double() - ref).abs().max().item():.3e}")
        print(line, flush=True)
