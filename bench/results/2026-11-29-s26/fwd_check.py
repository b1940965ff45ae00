"""Forward out / LSE of the library in dash/ against fp64, with and without softcap, at the head
dims given (bf16, full and causal, odd lengths): the exp2_on_fma variants' accuracy check."""
import sys
import torch
from dash import reference
from dash import ops

torch.manual_seed(0)
hdims = [int(h) for h in sys.argv[1:]] or [128]
for hd in hdims:
    for softcap in (0.0, 30.0, 5.0):
        for causal in (False, True):
            for s in (1000, 3001):
                q, k, v = (torch.randn(1, s, 4, hd, device="cuda", dtype=torch.bfloat16) * (3 if softcap else 1)
                           for _ in range(3))
                out, lse = ops.attn_fwd(q, k, v, causal=causal, softcap=softcap)
                ro, rl = reference.attention_forward(q.double(), k.double(), v.double(), None, causal,
                                                     compute_dtype=torch.float64, softcap=softcap)
                po, _ = reference.attention_forward(q, k, v, None, causal, compute_dtype=torch.bfloat16, softcap=softcap)
                e = (out.double() - ro).abs().max().item()
                ep = (po.double() - ro).abs().max().item()
                el = (lse.double() - rl).abs().max().item()
                print(f"hdim {hd} softcap {softcap:4} causal {causal!s:5} s {s}: out err {e:.2e} (bf16 torch {ep:.2e}) lse err {el:.2e}")
