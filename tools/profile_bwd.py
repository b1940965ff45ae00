"""One backward (or, with --pass fwd, forward) call of one shape, bracketed by
cudaProfilerStart/Stop, for Nsight Compute:

  ncu --clock-control none --profile-from-start off -k regex:attn_bwd_sm90 --set full -o bwd \
      python tools/profile_bwd.py --hdim 128 --seqlen 16384 --causal --deterministic

  --hdim 192x128: q/k head dim 192, v's 128. --impl fa3 runs upstream FlashAttention-3's
  backward instead (its `flash_attn_interface` on PYTHONPATH), on the same inputs, so both
  kernels can be profiled with one harness. FA3's kernels are all named `device_kernel`:
  select its main backward kernel with `--kernel-name-base demangled -k regex:FlashAttnBwdSm90`.

Same problem sizes as bench/bench_bwd.py (16k tokens, hidden 2048).
"""
from __future__ import annotations

import argparse
import math
import pathlib
import sys

import torch

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
import dash  # noqa: E402
from bench_bwd import parse_hdim  # noqa: E402  (the benchmarks' head-dim spec: "128", "192x128")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--hdim", type=parse_hdim, default=(128, 128), help="head dim, or qk x v as 192x128")
    parser.add_argument("--impl", choices=["dash", "fa3"], default="dash")
    parser.add_argument("--pass", dest="which", choices=["bwd", "fwd"], default="bwd",
                        help="fwd: profile the forward call instead (dash: -k regex:attn_fwd_sm90; FA3: "
                             "--kernel-name-base demangled -k regex:FlashAttnFwdSm90)")
    parser.add_argument("--seqlen", type=int, default=16384)
    parser.add_argument("--causal", action="store_true")
    parser.add_argument("--deterministic", action="store_true")
    parser.add_argument("--schedule", default="auto")
    parser.add_argument("--window", type=int, default=None,
                        help="sliding window: each query sees this many keys (window_size (W - 1, 0) with --causal)")
    parser.add_argument("--tokens", type=int, default=16384, help="tokens a call (batch = tokens / seqlen)")
    args = parser.parse_args()
    window = (args.window - 1, 0 if args.causal else args.window - 1) if args.window else (-1, -1)
    hdim, hdim_v = args.hdim
    batch, heads = max(args.tokens // args.seqlen, 1), 2048 // hdim
    q, k = (torch.randn(batch, args.seqlen, heads, hdim, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    v, dout = (torch.randn(batch, args.seqlen, heads, hdim_v, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    scale = 1.0 / math.sqrt(hdim)
    if args.which == "fwd":
        if args.impl == "fa3":
            import flash_attn_interface as fa3  # noqa: PLC0415

            def run():
                return fa3.flash_attn_func(q, k, v, softmax_scale=scale, causal=args.causal, window_size=window)
        else:
            def run():
                return dash.attn_fwd(q, k, v, scale, args.causal, window_size=window)
    elif args.impl == "fa3":
        import flash_attn_interface as fa3  # noqa: PLC0415  (upstream FlashAttention-3, built as a peer)
        leaves = [t.requires_grad_() for t in (q, k, v)]
        out = fa3.flash_attn_func(*leaves, softmax_scale=scale, causal=args.causal, window_size=window,
                                  deterministic=args.deterministic)
        out = out[0] if isinstance(out, tuple) else out

        def run():
            return torch.autograd.grad(out, leaves, dout, retain_graph=True)
    else:
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
    if args.impl == "dash" and args.which == "bwd":
        print(dash.attn_bwd_plan(q, k, args.causal, args.deterministic, args.schedule, window_size=window,
                                 head_dim_v=hdim_v))


if __name__ == "__main__":
    main()
