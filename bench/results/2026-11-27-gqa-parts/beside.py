"""A deterministic backward launched while another stream's kernel holds 40 SMs for 50 ms (as a
collective of overlapped communication might): time from its launch to its end, against the
same call on an idle GPU. Run once per library: python beside.py"""
import os
import statistics
import sys

import torch

sys.path.insert(0, os.getcwd())
import dash  # noqa: E402

CASES = [  # batch, heads, heads_kv, seqlen, head_dim, causal
    (4, 32, 8, 4096, 128, True),
    (4, 16, 16, 4096, 128, True),
    (4, 16, 16, 4096, 128, False),
]


def timed(fn, busy_ms=0):
    busy = torch.cuda.Stream()
    torch.cuda.synchronize()
    if busy_ms:
        with torch.cuda.stream(busy):
            torch.ops.dash._occupy_sms(40, busy_ms)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end)


for batch, heads, heads_kv, seqlen, hdim, causal in CASES:
    gen = torch.Generator(device="cuda").manual_seed(0)
    rand = lambda h: torch.randn(batch, seqlen, h, hdim, device="cuda", dtype=torch.bfloat16, generator=gen)  # noqa: E731
    q, k, v, dout = rand(heads), rand(heads_kv), rand(heads_kv), rand(heads)
    out, lse = dash.attn_fwd(q, k, v, causal=causal)
    for margin in (0, 40):
        fn = lambda: dash.attn_bwd(dout, q, k, v, out, lse, causal=causal, deterministic=True, sm_margin=margin)  # noqa: E731
        for _ in range(3):
            fn()
        idle = statistics.median(timed(fn) for _ in range(5))
        beside = statistics.median(timed(fn, 50) for _ in range(5))
        plan = dash.attn_bwd_plan(q, k, causal, True, sm_margin=margin)
        print(f"{batch}x{seqlen} {heads}/{heads_kv} hdim {hdim} {'causal' if causal else 'full'} sm_margin {margin} "
              f"({plan['schedule']}, grid {plan['grid']}): idle {idle:.2f} ms, beside a 50 ms kernel on 40 SMs "
              f"{beside:.2f} ms")
