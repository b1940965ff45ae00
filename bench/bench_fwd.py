"""Forward-pass benchmark: dash's forward (torch.ops.dash.attn_fwd) against PyTorch's SDPA
with cuDNN, SDPA flash (FlashAttention-2), FlexAttention and upstream FlashAttention-3
(optional: `flash_attn_interface` on PYTHONPATH, built outside the repo; skipped with a note
when absent), in one process on the same inputs.

Conventions (DASH-NOTES.md section 6, as bench/bench_bwd.py): bf16; total tokens 16384
(batch = 16384/seqlen), heads = 2048/head_dim (q/k's); forward FLOPs = 4*B*H*Sq*Sk*d, halved
for causal (d != d_v: 2*B*H*Sq*Sk*(d + d_v), dash.reference.attention_flops); each
implementation runs 2 s untimed, then >= --reps calls and >= 1 s timed, CUDA events around
each call, median (its power steady state; see bench_bwd.measure_steady);
forward alone, on inputs that do not require grad (no autograd graph is built; dash still
writes softmax_lse, the peers may skip theirs).

  python bench/bench_fwd.py                        # the whole grid
  python bench/bench_fwd.py --hdims 128 --seqlens 4096 16384 --masks causal --impls dash cudnn
  python bench/bench_fwd.py --hdims 96 192 192x128 256 --impls dash cudnn flex
  python bench/bench_fwd.py --hdims 64 --masks causal --impls dash fa3 --clocks   # + TFLOPS per GHz
  python bench/bench_fwd.py --hdims 128 --hidden 4096 --heads-kv 8 --impls dash fa3 cudnn   # Llama-3-8B's GQA

--hdims takes head dims of dash's trait table: "128" (q, k and v 128) or "192x128" (q and k
192, v 128; bench_bwd.parse_hdim). A peer that cannot run a shape (e.g. SDPA flash with
d != d_v) shows "-" and its reason in the log (an HTML comment between the table rows).

Prints a markdown table (TFLOPS, and dash / cuDNN) as the rows complete, and writes
<out>/bench_fwd.json and <out>/bench_fwd.md. FlexAttention compiles once per shape (tens of
seconds each): the full grid with flex takes several minutes; split it with --hdims/--masks.
"""
from __future__ import annotations

import argparse
import datetime
import json
import math
import pathlib
import sys

import torch

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))
import dash  # noqa: E402,F401  (loads the op library into torch.ops.dash)
from bench_bwd import import_fa3, time_ms  # noqa: E402  (CUDA events around back-to-back calls, median)
from gpu_clocks import ClockSampler, clock_cell, clocks_of  # noqa: E402
from bench_bwd import compiled_flex, DEFAULT_HDIMS, HEAD_DIMS, failure_reason, head_dim_name, parse_hdim, peer_warnings  # noqa: E402
from dash.reference import attention_flops  # noqa: E402

IMPLS = ["dash", "cudnn", "sdpa_flash", "flex", "fa3"]
LABELS = {"dash": "dash", "cudnn": "cuDNN", "sdpa_flash": "SDPA flash (FA2)", "flex": "FlexAttention",
          "fa3": "FA3"}
WARMUP = 5
CHECK_TOLERANCE = 2e-2  # max |out_dash - out_ref| above which a row is flagged (bf16 outputs)


class FwdProblem:
    def __init__(self, seqlen: int, head_dim: int, causal: bool, total_tokens: int, hidden: int,
                 window: int | None = None, softcap: float = 0.0, head_dim_v: int | None = None,
                 heads_kv: int | None = None):
        self.batch = max(total_tokens // seqlen, 1)
        self.heads = hidden // head_dim
        self.heads_kv = heads_kv or self.heads
        head_dim_v = head_dim if head_dim_v is None else head_dim_v
        self.seqlen, self.head_dim, self.head_dim_v, self.causal = seqlen, head_dim, head_dim_v, causal
        shape = (self.batch, seqlen, self.heads, head_dim)
        shape_k = (self.batch, seqlen, self.heads_kv, head_dim)
        shape_v = (self.batch, seqlen, self.heads_kv, head_dim_v)
        gen = torch.Generator(device="cuda").manual_seed(0)
        self.q, self.k, self.v = (torch.randn(s, device="cuda", dtype=torch.bfloat16, generator=gen)
                                  for s in (shape, shape_k, shape_v))
        self.scale = 1.0 / math.sqrt(head_dim)
        self.window = window
        self.softcap = softcap
        if softcap:  # scaled so that the cap matters (|score| ~ softcap)
            self.q.mul_(2.0)
            self.k.mul_(2.0)
        self.window_size = (window - 1, 0 if causal else window - 1) if window else (-1, -1)
        self.flops = attention_flops(self.batch, self.heads, seqlen, seqlen, head_dim, causal, backward=False,
                                     window_size=self.window_size, head_dim_v=head_dim_v)

    def heads_first(self):
        """(batch, heads, seqlen, head_dim) views of q, k, v (no copy), as SDPA and Flex take them."""
        return tuple(t.transpose(1, 2) for t in (self.q, self.k, self.v))

    @property
    def gqa(self) -> dict:
        """SDPA's and Flex's keyword for k / v with fewer heads than q (empty for MHA)."""
        return dict(enable_gqa=True) if self.heads_kv != self.heads else {}

    def dash_fn(self):
        op = torch.ops.dash.attn_fwd

        def run():
            return op(self.q, self.k, self.v, self.scale, self.causal, False, 0, "auto", *self.window_size,
                      self.softcap)[0]
        return run

    def sdpa_fn(self, backend):
        from torch.nn.attention import sdpa_kernel
        qh, kh, vh = self.heads_first()

        def run():
            with sdpa_kernel([backend]):
                out = torch.nn.functional.scaled_dot_product_attention(qh, kh, vh, is_causal=self.causal,
                                                                       scale=self.scale, **self.gqa)
            return out.transpose(1, 2)
        return run

    def fa3_fn(self):
        fa3 = import_fa3()
        if fa3 is None:
            return None

        def run():
            out = fa3.flash_attn_func(self.q, self.k, self.v, softmax_scale=self.scale, causal=self.causal,
                                      window_size=self.window_size, softcap=self.softcap)
            return out[0] if isinstance(out, tuple) else out
        return run

    def flex_fn(self):
        from torch.nn.attention.flex_attention import create_block_mask
        compiled = compiled_flex()
        qh, kh, vh = self.heads_first()
        block_mask = None
        left, right = self.window_size
        if self.causal or self.window:
            def band(b, h, q, kv):
                visible = q >= kv if self.causal else (kv - q <= right) if right >= 0 else q == q
                return visible & (q - kv <= left) if left >= 0 else visible
            block_mask = create_block_mask(band, None, None, self.seqlen, self.seqlen, device="cuda")

        score_mod = None
        if self.softcap:
            cap = self.softcap

            def score_mod(score, b, h, q, kv):
                return cap * torch.tanh(score / cap)

        def run():
            return compiled(qh, kh, vh, block_mask=block_mask, score_mod=score_mod, scale=self.scale,
                            **self.gqa).transpose(1, 2)
        return run


def make_fn(problem: FwdProblem, impl: str):
    """(callable running impl's forward once, its output after warm-up), or (None, None)
    where it cannot run here (the reason is printed)."""
    with peer_warnings() as caught:
        return _make_fn(problem, impl, caught)


def _make_fn(problem: FwdProblem, impl: str, caught: list):
    from torch.nn.attention import SDPBackend
    try:
        if impl == "dash":
            fn = problem.dash_fn()
        elif impl in ("cudnn", "sdpa_flash") and (problem.window or problem.softcap):
            return None, None  # SDPA has no sliding window and no softcap
        elif impl == "cudnn":
            fn = problem.sdpa_fn(SDPBackend.CUDNN_ATTENTION)
        elif impl == "sdpa_flash":
            fn = problem.sdpa_fn(SDPBackend.FLASH_ATTENTION)
        elif impl == "flex":
            fn = problem.flex_fn()
        elif impl == "fa3":
            fn = problem.fa3_fn()
            if fn is None:
                return None, None
        else:
            raise ValueError(impl)
        for _ in range(WARMUP):  # warm-up (and compile, for flex)
            out = fn()
        torch.cuda.synchronize()
        return fn, out
    except Exception as err:  # a peer that cannot run this shape: report, keep going
        print(f"<!-- {impl}: failed: {failure_reason(err, caught).replace('--', '- -')} -->", flush=True)
        return None, None


def measure(problem: FwdProblem, impls: list[str], reps: int, warm_s: float, min_s: float,
            windows: dict | None = None) -> dict:
    """Median ms and TFLOPS per implementation, and dash's max |difference| from the first
    peer that ran (a sanity check that the timed kernels compute the same thing). `windows`, if
    given, receives each implementation's timed stretch (--clocks)."""
    ms, tflops, outputs = {}, {}, {}
    for impl in impls:
        fn, out = make_fn(problem, impl)
        if fn is None:
            ms[impl] = tflops[impl] = None
            continue
        ms[impl] = time_ms(fn, reps, warm_s, min_s, windows.setdefault(impl, []) if windows is not None else None)
        tflops[impl] = problem.flops / (ms[impl] * 1e-3) / 1e12
        outputs[impl] = out
    check = None
    if "dash" in outputs:
        ref_impl = next((i for i in ("cudnn", "sdpa_flash", "flex") if i in outputs), None)
        if ref_impl is not None:
            diff = (outputs["dash"].float() - outputs[ref_impl].float()).abs().max().item()
            check = dict(reference=ref_impl, max_abs_diff=diff, ok=diff <= CHECK_TOLERANCE)
    return dict(ms=ms, tflops=tflops, check=check)


def ratio(tflops: dict, a: str, b: str) -> float | None:
    if tflops.get(a) and tflops.get(b):
        return tflops[a] / tflops[b]
    return None


def table_header(impls: list[str]) -> list[str]:
    cols = ["hdim", "seqlen", "mask"] + [LABELS[i] for i in impls]
    aligns = ["---:", "---:", "---"] + ["---:"] * len(impls)
    if "dash" in impls and "cudnn" in impls:
        cols.append("dash / cuDNN")
        aligns.append("---:")
    return ["| " + " | ".join(cols) + " |", "|" + "|".join(aligns) + "|"]


def table_row(row: dict, impls: list[str]) -> str:
    cells = [row["hdim"], str(row["seqlen"]), "causal" if row["causal"] else "full"]
    cells += [f"{row['tflops'][i]:.1f}" if row["tflops"].get(i) else "-" for i in impls]
    if "dash" in impls and "cudnn" in impls:
        r = row["dash_vs_cudnn"]
        cells.append(f"{r:.2f}" if r else "-")
    line = "| " + " | ".join(cells) + " |"
    check = row.get("check")
    if check and not check["ok"]:
        line += f" <!-- dash differs from {check['reference']} by {check['max_abs_diff']:.3g} -->"
    return line


def clock_table(results: list[dict], impls: list[str], sampler) -> list[str]:
    """--clocks: the grid again as "TFLOPS per GHz @ MHz / W" (stored in the results as "clocks")."""
    lines = ["| hdim | seqlen | mask | " + " | ".join(LABELS[i] for i in impls) + " |",
             "|---:|---:|---|" + "---|" * len(impls)]
    for r in results:
        r["clocks"] = clocks_of(sampler, r["tflops"], r["windows"])
        cells = [clock_cell(r["clocks"][i]) if i in r["clocks"] else "-" for i in impls]
        lines.append(f"| {r['hdim']} | {r['seqlen']} | {'causal' if r['causal'] else 'full'} | " + " | ".join(cells) + " |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hdims", "--hdim", type=parse_hdim, nargs="+", default=DEFAULT_HDIMS,
                        help='head dims: "128" (q, k, v) or "192x128" (q and k 192, v 128); '
                             f"one of {', '.join(head_dim_name(*p) for p in HEAD_DIMS)} (default: 64 128)")
    parser.add_argument("--seqlens", "--seqlen", type=int, nargs="+", default=[512, 1024, 2048, 4096, 8192, 16384])
    parser.add_argument("--masks", "--mask", choices=["full", "causal"], nargs="+", default=["full", "causal"])
    parser.add_argument("--impls", "--impl", choices=IMPLS, nargs="+", default=IMPLS)
    parser.add_argument("--reps", type=int, default=30, help="timed calls per point, median (default %(default)s)")
    parser.add_argument("--warm-s", type=float, default=2.0, help="untimed seconds before timing each implementation")
    parser.add_argument("--min-s", type=float, default=1.0, help="timed seconds per implementation (at least)")
    parser.add_argument("--total-tokens", type=int, default=16384)
    parser.add_argument("--hidden", type=int, default=2048)
    parser.add_argument("--heads-kv", type=int, default=None,
                        help="K/V heads (GQA / MQA; default: MHA); e.g. --hidden 4096 --heads-kv 8 is Llama-3-8B's")
    parser.add_argument("--window", type=int, default=None,
                        help="sliding window: each query sees this many keys (window_size (W - 1, 0) with causal)")
    parser.add_argument("--softcap", type=float, default=0.0, help="score softcap (0: off; inputs scaled by 2)")
    parser.add_argument("--clocks", action="store_true",
                        help="sample the SM clock and board power (nvidia-smi) through each timed window and "
                             "add a table of TFLOPS per GHz @ MHz / W after the grid (bench/gpu_clocks.py)")
    parser.add_argument("--out", type=pathlib.Path, default=ROOT / "bench" / "out")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit("error: CUDA is not available: this benchmark needs an NVIDIA GPU (dash: sm90, H100/H200)")
    if "dash" in args.impls and not dash.library_loaded:
        sys.exit("error: dash's op library is not built or does not load: run 'make build'")
    args.out.mkdir(parents=True, exist_ok=True)

    gpu = torch.cuda.get_device_name()
    preamble = (f"{gpu}, torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}: forward TFLOPS, "
                f"bf16, {args.total_tokens} tokens, hidden {args.hidden}, each alone: {args.warm_s:g} s untimed, "
                f"then median of >= {args.reps} calls and {args.min_s:g} s")
    print(preamble + "\n", flush=True)
    lines = table_header(args.impls)
    print("\n".join(lines), flush=True)
    results = []
    sampler = ClockSampler.start() if args.clocks else None
    for head_dim, head_dim_v in args.hdims:
        for mask in args.masks:
            for seqlen in args.seqlens:
                problem = FwdProblem(seqlen, head_dim, mask == "causal", args.total_tokens, args.hidden, args.window,
                                     args.softcap, head_dim_v=head_dim_v, heads_kv=args.heads_kv)
                windows = {} if sampler is not None else None
                measured = measure(problem, args.impls, args.reps, args.warm_s, args.min_s, windows)
                row = dict(hdim=head_dim_name(head_dim, head_dim_v), head_dim=head_dim, head_dim_v=head_dim_v,
                           seqlen=seqlen, causal=mask == "causal", batch=problem.batch,
                           heads=problem.heads, heads_kv=problem.heads_kv, flops=problem.flops, **measured,
                           dash_vs_cudnn=ratio(measured["tflops"], "dash", "cudnn"))
                results.append(row)
                row["windows"] = windows
                lines.append(table_row(row, args.impls))
                print(lines[-1], flush=True)
                del problem
                torch.cuda.empty_cache()
    if sampler is not None:
        sampler.stop()
        lines += ["", "Work a clock: TFLOPS per GHz @ mean SM MHz / board W through each timed window (nvidia-smi)", ""]
        lines += clock_table(results, args.impls, sampler)
        print("\n".join(lines[-(len(results) + 5):]), flush=True)
    for r in results:
        r.pop("windows")
    flagged = [r for r in results if r["check"] and not r["check"]["ok"]]
    if flagged:
        print(f"\nWARNING: dash's output differs from the reference by more than {CHECK_TOLERANCE} at "
              f"{len(flagged)} point(s); see the JSON ('check')")
    meta = dict(date=datetime.datetime.now().isoformat(timespec="seconds"), gpu=gpu, torch=torch.__version__,
                cudnn=torch.backends.cudnn.version(), reps=args.reps, warm_s=args.warm_s, min_s=args.min_s,
                total_tokens=args.total_tokens,
                hidden=args.hidden, heads_kv=args.heads_kv, command=" ".join(sys.argv))
    (args.out / "bench_fwd.json").write_text(json.dumps(dict(meta=meta, results=results), indent=1))
    (args.out / "bench_fwd.md").write_text(preamble + "\n\n" + "\n".join(lines) + "\n")
    print(f"\nwrote {args.out / 'bench_fwd.json'} and {args.out / 'bench_fwd.md'}")


if __name__ == "__main__":
    main()
