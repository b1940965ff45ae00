"""One backward call of one shape, bracketed by cudaProfilerStart/Stop, for Nsight Compute:

  ncu --profile-from-start off -k regex:attn_bwd_sm90 --set full -o bwd python tools/profile_bwd.py \
      --hdim 128 --seqlen 16384 --causal --deterministic --schedule symmetric_shift

Same problem sizes as bench/bench_bwd.py (16k tokens, hidden 2048).
"""
from __future__ import annotations

import argparse
import math
import pathlib
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import dash  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--hdim", type=int, default=128)
    parser.add_argument("--seqlen", type=int, default=16384)
    parser.add_argument("--causal", action="store_true")
    parser.add_argument("--deterministic", action="store_true")
    parser.add_argument("--schedule", default="auto")
    parser.add_argument("--window", type=int, default=None,
                        help="sliding window: each query sees this many keys (window_size (W - 1, 0) with --causal)")
    parser.add_argument("--tokens", type=int, default=16384, help="tokens a call (batch = tokens / seqlen)")
    args = parser.parse_args()
    window = (args.window - 1, 0 if args.causal else args.window - 1) if args.window else (-1, -1)
    batch, heads = max(args.tokens // args.seqlen, 1), 2048 // args.hdim
    shape = (batch, args.seqlen, heads, args.hdim)
    q, k, v, dout = (torch.randn(shape, device="cuda", dtype=torch.bfloat16) for _ in range(4))
    scale = 1.0 / math.sqrt(args.hdim)
    out, lse = dash.attn_fwd(q, k, v, scale, args.causal, window_size=window)

    def run():
        return dash.attn_bwd(dout, q, k, v, out, lse, scale, args.causal, args.deterministic,
                             schedule=args.schedule, window_size=window)
    for _ in range(3):
        run()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    run()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()
    print(dash.attn_bwd_plan(q, k, args.causal, args.deterministic, args.schedule, window_size=window))


if __name__ == "__main__":
    main()
