"""Where a backward call's time goes, kernel by kernel: each implementation's backward is
run in its power steady state (bench_bwd's method), then `--calls` calls under
torch.profiler, and each CUDA kernel's mean time a call is printed beside the call's total
and its TFLOPS (bench_bwd's FLOP convention); then the same calls timed as bench_bwd times
them (events around each call) and the host's time to issue one. Shapes as bench_bwd takes
them.

Read the profiled times as shares of one call, not as speeds: under the profiler the kernels
of a call ran 3-10% faster than in the events' loop (the GPU idles between profiled kernels,
so its 700 W cap bites less), and a kernel's time moved into another kernel does not show up
in the events' time one for one (bench/RESULTS.md items 148-149).

  python bench/kernel_breakdown.py --hdim 128 --hidden 4096 --heads-kv 8 --seqlen 4096 --mask causal \
      --impl dash_det dash fa3_det fa3
"""
from __future__ import annotations

import argparse
import collections
import pathlib
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from bench_bwd import Problem, make_fn, parse_hdim, run_queued, time_ms  # noqa: E402


def short(name: str) -> str:
    for key in ("attn_bwd_sm90_kernel", "attn_bwd_dkv_sum_kernel", "attn_bwd_dq_convert", "attn_bwd_pre",
                "FlashAttnBwdSm90", "flash_bwd_dot_do_o", "flash_bwd_convert_dq", "flash_bwd_convert_dkv",
                "FlashAttnBwdPostprocessConvertdQ", "FlashAttnBwdPreprocess", "postprocess", "convert",
                "preprocess"):
        if key in name:
            return key
    return name[:60]


def breakdown(fn, calls: int) -> tuple[float, dict[str, float]]:
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    per_kernel: dict[str, float] = collections.defaultdict(float)
    for event in prof.events():
        if event.device_type == torch.autograd.DeviceType.CUDA:
            per_kernel[short(event.name)] += event.device_time / 1000.0 / calls  # ms a call
    return sum(per_kernel.values()), dict(per_kernel)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--hdim", type=parse_hdim, nargs="+", default=[(128, 128)])
    parser.add_argument("--seqlen", type=int, nargs="+", default=[4096])
    parser.add_argument("--mask", nargs="+", default=["causal"], choices=["full", "causal"])
    parser.add_argument("--hidden", type=int, default=2048)
    parser.add_argument("--heads-kv", type=int, default=None)
    parser.add_argument("--total-tokens", type=int, default=16384)
    parser.add_argument("--impl", nargs="+", default=["dash_det", "dash"])
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--warm-s", type=float, default=1.0)
    args = parser.parse_args()
    for hdim, hdim_v in args.hdim:
        for seqlen in args.seqlen:
            for mask in args.mask:
                problem = Problem(seqlen, hdim, mask == "causal", args.total_tokens, args.hidden, args.heads_kv,
                                  head_dim_v=hdim_v)
                print(f"## hdim {hdim}x{hdim_v} seqlen {seqlen} {mask} heads {problem.heads}/{problem.heads_kv} "
                      f"batch {problem.batch}")
                for impl in args.impl:
                    fn = make_fn(problem, impl)
                    if fn is None:
                        print(f"{impl:10s} -")
                        continue
                    run_queued(fn, args.warm_s, 1)
                    total, kernels = breakdown(fn, args.calls)
                    parts = "  ".join(f"{k} {v:.3f}" for k, v in sorted(kernels.items(), key=lambda kv: -kv[1]))
                    print(f"{impl:10s} total {total:.3f} ms ({problem.flops / total / 1e9:.1f} TFLOPS)  {parts}")
                    # The same calls timed as bench_bwd times them (events around each call), and
                    # the host's time to issue one call while the GPU is busy (no sync).
                    event_ms = time_ms(fn, args.calls, args.warm_s, 0.5)
                    torch.cuda.synchronize()
                    t0 = time.perf_counter()
                    for _ in range(args.calls):
                        fn()
                    host_ms = (time.perf_counter() - t0) * 1e3 / args.calls
                    torch.cuda.synchronize()
                    print(f"{'':10s} events {event_ms:.3f} ms a call ({problem.flops / event_ms / 1e9:.1f} TFLOPS), "
                          f"host {host_ms:.3f} ms a call")
                    if impl.startswith("dash"):
                        print(f"{'':10s} plan {problem.plan(impl.startswith('dash_det'))}")
                    sys.stdout.flush()


if __name__ == "__main__":
    main()
