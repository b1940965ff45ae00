"""Benchmark of packed (variable-length) batches, backward (default) or forward (--pass fwd): dash
(deterministic and not; the forward has one mode), upstream FlashAttention-3's varlen passes
(optional peer, found on PYTHONPATH as in bench_bwd.py), FlexAttention with a document mask
(block mask built once) and SDPA on the documents padded to a batch (the naive baseline), in
one process on the same documents, each timed in its own power steady state (bench_bwd.time_ms).

Rows of --tokens tokens are packed from documents with lengths drawn log-uniformly from
[--min-len, --max-len] (fixed seed; the last document is cut to fill the row). TFLOPS count
each document's own FLOPs (DASH-NOTES section 6: 4·H·L²·d forward, 2.5 times that backward,
halved for causal), summed.

  python bench/bench_varlen.py                                   # both mixes, hdim 128, causal
  python bench/bench_varlen.py --mix long --impl dash_det dash flex
  python bench/bench_varlen.py --pass fwd --impl dash fa3        # the forward (dash_det = dash)
Writes <out>/bench_varlen.json.
"""
from __future__ import annotations

import argparse
import datetime
import itertools
import json
import math
import pathlib
import random
import sys

import torch

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
import dash  # noqa: E402
from bench_bwd import compiled_flex, import_fa3, time_ms  # noqa: E402

MIXES = {"long": (64, 8192), "short": (16, 1024)}  # (min, max) document length, log-uniform
IMPLS = ["dash_det", "dash", "fa3_det", "fa3", "flex", "sdpa_padded"]
LABELS = {"dash_det": "dash det", "dash": "dash non-det", "fa3_det": "FA3 det", "fa3": "FA3 non-det",
          "flex": "Flex doc mask", "sdpa_padded": "SDPA padded"}


def document_lengths(tokens: int, lo: int, hi: int, seed: int = 0) -> list[int]:
    rng = random.Random(seed)
    lengths = []
    while sum(lengths) < tokens:
        lengths.append(int(round(math.exp(rng.uniform(math.log(lo), math.log(hi))))))
    lengths[-1] -= sum(lengths) - tokens
    return [n for n in lengths if n > 0]


class VarlenProblem:
    def __init__(self, lengths, heads, heads_kv, head_dim, causal, forward=False):
        self.lengths, self.heads, self.heads_kv, self.head_dim, self.causal = lengths, heads, heads_kv, head_dim, causal
        self.forward = forward
        total = sum(lengths)
        gen = torch.Generator(device="cuda").manual_seed(0)
        rand = lambda *s: torch.randn(*s, device="cuda", dtype=torch.bfloat16, generator=gen)  # noqa: E731
        self.q, self.dout = rand(total, heads, head_dim), rand(total, heads, head_dim)
        self.k, self.v = rand(total, heads_kv, head_dim), rand(total, heads_kv, head_dim)
        self.cu = torch.tensor([0, *itertools.accumulate(lengths)], dtype=torch.int32, device="cuda")
        self.max_len = max(lengths)
        self.scale = 1.0 / math.sqrt(head_dim)
        self.out, self.lse = dash.attn_varlen_fwd(self.q, self.k, self.v, self.cu, self.cu, self.max_len, self.max_len,
                                                  softmax_scale=self.scale, causal=causal)
        per_doc = sum(4.0 * heads * n * n * head_dim for n in lengths)
        self.flops = (1.0 if forward else 2.5) * (per_doc / 2 if causal else per_doc)

    def dash_fn(self, deterministic):
        if self.forward:
            def run_fwd():
                dash.attn_varlen_fwd(self.q, self.k, self.v, self.cu, self.cu, self.max_len, self.max_len,
                                     softmax_scale=self.scale, causal=self.causal)
            return run_fwd

        def run():
            dash.attn_varlen_bwd(self.dout, self.q, self.k, self.v, self.out, self.lse, self.cu, self.cu, self.max_len,
                                 self.max_len, softmax_scale=self.scale, causal=self.causal,
                                 deterministic=deterministic)
        return run

    def fa3_fn(self, deterministic):
        fa3 = import_fa3()
        if fa3 is None:
            return None
        if self.forward:
            def run_fwd():
                fa3.flash_attn_varlen_func(self.q, self.k, self.v, self.cu, self.cu, self.max_len, self.max_len,
                                           softmax_scale=self.scale, causal=self.causal)
            return run_fwd
        q, k, v = (t.detach().requires_grad_() for t in (self.q, self.k, self.v))
        out = fa3.flash_attn_varlen_func(q, k, v, self.cu, self.cu, self.max_len, self.max_len,
                                         softmax_scale=self.scale, causal=self.causal, deterministic=deterministic)
        out = out[0] if isinstance(out, tuple) else out

        def run():
            torch.autograd.grad(out, (q, k, v), self.dout, retain_graph=True)
        return run

    def flex_fn(self):
        from torch.nn.attention.flex_attention import create_block_mask
        doc = torch.repeat_interleave(torch.arange(len(self.lengths), device="cuda"),
                                      torch.tensor(self.lengths, device="cuda"))
        causal = self.causal

        def mask_mod(b, h, q_idx, kv_idx):
            same = doc[q_idx] == doc[kv_idx]
            return same & (q_idx >= kv_idx) if causal else same

        total = sum(self.lengths)
        block_mask = create_block_mask(mask_mod, None, None, total, total)
        compiled = compiled_flex()
        gqa = self.heads != self.heads_kv
        if self.forward:
            qf, kf, vf = (t.transpose(0, 1)[None] for t in (self.q, self.k, self.v))

            def run_fwd():
                compiled(qf, kf, vf, block_mask=block_mask, scale=self.scale, enable_gqa=gqa)
            return run_fwd
        q, k, v = (t.transpose(0, 1)[None].detach().requires_grad_() for t in (self.q, self.k, self.v))
        out = compiled(q, k, v, block_mask=block_mask, scale=self.scale, enable_gqa=gqa)
        dout = self.dout.transpose(0, 1)[None]

        def run():
            torch.autograd.grad(out, (q, k, v), dout, retain_graph=True)
        return run

    def sdpa_padded_fn(self):
        batch, longest = len(self.lengths), self.max_len

        def pad(t):
            padded = t.new_zeros(batch, longest, t.shape[1], t.shape[2])
            for i, (a, b) in enumerate(zip(self.cu[:-1].tolist(), self.cu[1:].tolist())):
                padded[i, : b - a] = t[a:b]
            return padded.transpose(1, 2).detach().requires_grad_()
        q, k, v = pad(self.q), pad(self.k), pad(self.v)
        dout = pad(self.dout).detach()
        gqa = dict(enable_gqa=True) if self.heads != self.heads_kv else {}
        if self.forward:
            qf, kf, vf = (t.detach() for t in (q, k, v))

            def run_fwd():
                torch.nn.functional.scaled_dot_product_attention(qf, kf, vf, is_causal=self.causal, scale=self.scale,
                                                                 **gqa)
            return run_fwd
        out = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=self.causal, scale=self.scale,
                                                               **gqa)

        def run():
            torch.autograd.grad(out, (q, k, v), dout, retain_graph=True)
        return run


def make_fn(problem, impl):
    try:
        if impl.startswith("dash"):
            fn = problem.dash_fn(impl == "dash_det")
        elif impl.startswith("fa3"):
            fn = problem.fa3_fn(impl == "fa3_det")
        elif impl == "flex":
            fn = problem.flex_fn()
        else:
            fn = problem.sdpa_padded_fn()
        if fn is None:
            return None
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        return fn
    except Exception as err:  # noqa: BLE001 (a peer that cannot run: report, keep going)
        print(f"  {impl}: failed: {type(err).__name__}: {str(err).splitlines()[0][:160]}", flush=True)
        return None


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pass", dest="pass_", choices=["bwd", "fwd"], default="bwd",
                        help="fwd: the forward alone (no autograd graph; dash_det runs as dash)")
    parser.add_argument("--mix", choices=sorted(MIXES), nargs="+", default=["long", "short"])
    parser.add_argument("--impl", choices=IMPLS, nargs="+", default=IMPLS)
    parser.add_argument("--hdim", type=int, default=128)
    parser.add_argument("--heads", type=int, default=16)
    parser.add_argument("--heads-kv", type=int, default=None)
    parser.add_argument("--tokens", type=int, default=16384)
    parser.add_argument("--mask", choices=["causal", "full"], default="causal")
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--warm-s", type=float, default=2.0)
    parser.add_argument("--min-s", type=float, default=1.0)
    parser.add_argument("--out", type=pathlib.Path, default=ROOT / "bench" / "out")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    forward = args.pass_ == "fwd"
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}, varlen {'forward' if forward else 'backward'} TFLOPS (per-document FLOPs; "
          f"each alone: {args.warm_s:g} s untimed, >= {args.reps} calls and {args.min_s:g} s timed, median)")
    print(f"{'mix':>6} {'docs':>5} " + " ".join(f"{LABELS[i]:>14}" for i in args.impl), flush=True)
    results = []
    for mix in args.mix:
        lengths = document_lengths(args.tokens, *MIXES[mix])
        problem = VarlenProblem(lengths, args.heads, args.heads_kv or args.heads, args.hdim, args.mask == "causal",
                                forward)
        tflops = {}
        for impl in args.impl:
            fn = make_fn(problem, impl)
            tflops[impl] = (problem.flops / (time_ms(fn, args.reps, args.warm_s, args.min_s) * 1e-3) / 1e12
                            if fn is not None else None)
        results.append(dict(mix=mix, lengths=lengths, tflops=tflops))
        cells = " ".join(f"{tflops[i]:>14.1f}" if tflops[i] else f"{'-':>14}" for i in args.impl)
        print(f"{mix:>6} {len(lengths):>5} {cells}", flush=True)
        del problem
        torch.cuda.empty_cache()
    meta = dict(date=datetime.datetime.now().isoformat(timespec="seconds"), gpu=torch.cuda.get_device_name(),
                torch=torch.__version__, command=" ".join(sys.argv), pass_=args.pass_, heads=args.heads,
                heads_kv=args.heads_kv or args.heads, head_dim=args.hdim, mask=args.mask, tokens=args.tokens)
    (args.out / "bench_varlen.json").write_text(json.dumps(dict(meta=meta, results=results), indent=1))
    print(f"wrote {args.out / 'bench_varlen.json'}")


if __name__ == "__main__":
    main()
