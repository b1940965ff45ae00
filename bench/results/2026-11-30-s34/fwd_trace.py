"""Experiment (RESULTS item 252): where a causal forward launch's time goes at its start and end. Needs a
library from branch exp/fwd-trace (DASH_EXP_FWD_TRACE_PTR: the address of an int64 buffer of 8 values a CTA:
start, producer end, MMA end, SM id, tiles, first tile start, last tile start). From the repository root:
  PYTHONPATH=$PWD python3 bench/results/2026-11-30-s34/fwd_trace.py"""
import os

import torch

import dash

CASES = [(1, 32768, 4), (1, 16384, 16), (8, 2048, 16)]  # batch, seqlen, heads; hdim 128, causal, bf16
trace = torch.zeros(132 * 8, dtype=torch.int64, device="cuda")
for batch, seqlen, heads in CASES:
    q, k, v = (torch.randn(batch, seqlen, heads, 128, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    os.environ["DASH_EXP_FWD_TRACE_PTR"] = str(trace.data_ptr())
    for _ in range(20):
        dash.attn_fwd(q, k, v, causal=True)
    trace.zero_()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    dash.attn_fwd(q, k, v, causal=True)
    end.record()
    torch.cuda.synchronize()
    t = trace.view(-1, 8).cpu()
    t = t[t[:, 0] != 0].double()
    t0 = t[:, 0].min()
    begin, prod_end, mma_end, tiles = t[:, 0] - t0, t[:, 1] - t0, t[:, 2] - t0, t[:, 4]
    first_tile, last_tile = t[:, 5] - t0, t[:, 6] - t0
    span = mma_end.max()
    q50 = lambda x: x.median().item()  # noqa: E731
    print(f"batch {batch} seqlen {seqlen} heads {heads}: event {start.elapsed_time(end) * 1e3:.1f} us, CTAs {len(t)}, "
          f"span (first CTA start -> last MMA end) {span / 1e3:.1f} us", flush=True)
    print(f"  CTA start offsets max {begin.max() / 1e3:.1f} us; first tile picked up at median {q50(first_tile) / 1e3:.1f}, "
          f"max {first_tile.max() / 1e3:.1f} us", flush=True)
    print(f"  MMA end: min {mma_end.min() / 1e3:.1f}, median {q50(mma_end) / 1e3:.1f}, max {span / 1e3:.1f} us; idle tail "
          f"mean {(span - mma_end).mean() / 1e3:.1f} us ({(span - mma_end).mean() / span:.1%} of the span)", flush=True)
    print(f"  last tile started: min {last_tile.min() / 1e3:.1f}, max {last_tile.max() / 1e3:.1f} us; tiles a CTA "
          f"{tiles.min():.0f}-{tiles.max():.0f}; producer end max {prod_end.max() / 1e3:.1f} us", flush=True)
    del os.environ["DASH_EXP_FWD_TRACE_PTR"]
