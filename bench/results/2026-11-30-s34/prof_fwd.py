"""One forward call under the CUDA profiler (ncu --profile-from-start off): dash or FlashAttention-3
(flash_attn_interface on PYTHONPATH), bf16, causal, hdim 128. Args: impl seqlen heads batch.
From the repository root: PYTHONPATH=$PWD python3 bench/results/2026-11-30-s34/prof_fwd.py dash 32768 4 1"""
import sys

import torch

impl, seqlen, heads, batch = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
q, k, v = (torch.randn(batch, seqlen, heads, 128, device="cuda", dtype=torch.bfloat16) for _ in range(3))
if impl == "dash":
    import dash

    def call():
        return dash.attn_fwd(q, k, v, causal=True)
else:
    import flash_attn_interface

    def call():
        return flash_attn_interface.flash_attn_func(q, k, v, causal=True)
for _ in range(5):
    call()
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStart()
call()
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStop()
