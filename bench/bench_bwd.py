"""Backward-pass benchmark: dash (deterministic and not) against PyTorch's SDPA with
cuDNN, SDPA flash under torch.use_deterministic_algorithms(True) (FlashAttention-2),
FlexAttention and upstream FlashAttention-3 (deterministic and not; optional: found as
`flash_attn_interface` on PYTHONPATH, built outside the repo as in
shared/design/GPU-WORKFLOW.md, skipped with a note when absent), in one process on the
same inputs. --heads-kv gives k and v fewer heads (GQA / MQA; SDPA and Flex run with
enable_gqa=True; FA2 has no GQA path in SDPA and is skipped).

--hdim takes head dims of dash's trait table (dash/_traits.py): "128" (q, k and v 128) or
"192x128" (q and k 192, v 128). A pair whose backward dash does not have (a forward-only
entry; none today) is skipped for dash with a note; the peers still run on it. A
peer that cannot run a shape (e.g. cuDNN or FA2 past their head-dim limits) shows "-" and
its reason in the log.

Conventions (DASH-NOTES.md section 6): bf16; total tokens 16384 (batch = 16384/seqlen),
heads = 2048/head_dim (q/k's); backward FLOPs = 2.5 * 4*B*H*Sq*Sk*d, halved for causal
(d != d_v: 2*B*H*Sq*Sk*(3d + 2d_v), dash.reference.attention_flops); CUDA
events around each call, median, backward alone. Each implementation is timed in its own
power steady state (see measure_steady; the GPU runs these kernels at its power cap).

  python bench/bench_bwd.py                       # the whole grid
  python bench/bench_bwd.py --hdim 128 --seqlen 4096 8192 --mask causal --impl dash_det cudnn
  python bench/bench_bwd.py --hdim 96 192x128 --impl dash_det dash cudnn flex
  python bench/bench_bwd.py --hdim 128 --seqlen 16384 32768 --total-tokens 32768 --mask causal --window 4096 \
      --impl dash_det dash flex fa3_det fa3     # Mistral-style sliding window: each query sees 4096 keys
  python bench/bench_bwd.py --hdim 64 --seqlen 16384 --mask causal --impl dash_det fa3 --clocks
      # also each implementation's mean SM clock and power, and TFLOPS per GHz (the work a clock)
With --window W the mask is causal with window_size (W - 1, 0) and FLOPs count the pairs inside
the window; SDPA has no sliding window (cuDNN and FA2 are skipped), Flex gets the same band as
its block mask.
Writes <out>/bench_bwd.json and one PNG per head dim.
"""
from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import math
import pathlib
import random
import statistics
import sys
import time
import warnings

import torch

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import dash  # noqa: E402
from dash._traits import HEAD_DIMS, head_dim_name  # noqa: E402  (the trait table; loads without the op library)
from dash.reference import attention_flops  # noqa: E402

from dash.schedule import SCHEDULES  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from gpu_clocks import ClockSampler, clock_cell, clocks_of  # noqa: E402

IMPLS = ["dash_det", "dash", "cudnn", "sdpa_flash_det", "flex", "fa3_det", "fa3"]
LABELS = {"dash_det": "dash det", "dash": "dash non-det", "cudnn": "cuDNN (non-det)",
          "sdpa_flash_det": "SDPA flash det (FA2)", "flex": "FlexAttention", "fa3_det": "FA3 det",
          "fa3": "FA3 non-det"}
for _s in SCHEDULES:  # one column per explicit schedule: dash_det:<schedule>, dash:<schedule> (non-det)
    IMPLS.append(f"dash_det:{_s}")
    LABELS[f"dash_det:{_s}"] = f"det {_s}"
for _s in SCHEDULES:
    IMPLS.append(f"dash:{_s}")
    LABELS[f"dash:{_s}"] = f"non-det {_s}"
DEFAULT_IMPLS = IMPLS[:5] + ["fa3_det", "fa3"]
DEFAULT_HDIMS = [(64, 64), (128, 128)]


def parse_hdim(spec: str) -> tuple[int, int]:
    """A head-dim spec as --hdim / --hdims take it: "128" -> (128, 128), "192x128" ->
    (192, 128) (q and k's head dim, then v's); one of the trait table's pairs."""
    try:
        dims = tuple(int(x) for x in spec.lower().split("x"))
    except ValueError:
        dims = ()
    if len(dims) == 1:
        dims = dims * 2
    known = ", ".join(head_dim_name(*p) for p in HEAD_DIMS)
    if len(dims) != 2:
        raise argparse.ArgumentTypeError(f"{spec!r} is not a head dim: give D (q, k and v) or DxDV "
                                         f"(q and k D, v DV), one of {known}")
    if dims not in HEAD_DIMS:
        raise argparse.ArgumentTypeError(f"{spec!r}: head dims {dims} are not in dash's trait table; "
                                         f"known: {known}")
    return dims


def import_fa3():
    """Upstream FlashAttention-3's interface module, or None (with the reason printed once)."""
    global _FA3
    if _FA3 is None:
        try:
            import flash_attn_interface as fa3  # noqa: PLC0415
            if not hasattr(fa3, "flash_attn_func") or fa3.__name__.startswith("dash"):
                raise ImportError("not FlashAttention-3's module")
            _FA3 = fa3
        except Exception as err:  # noqa: BLE001
            print(f"FlashAttention-3 peer not available ({type(err).__name__}: {err}); build it outside the repo "
                  "(shared/design/GPU-WORKFLOW.md) and put it on PYTHONPATH", flush=True)
            _FA3 = False
    return _FA3 or None


_FA3 = None


def dash_has_backward(head_dim: int, head_dim_v: int) -> bool:
    """Whether dash's library runs the backward for these head dims (False for forward-only
    pairs, and where the library does not load)."""
    if not dash.library_loaded:
        return False
    from dash import capabilities
    return capabilities.supports(head_dim, head_dim_v, backward=True)


_COMPILED_FLEX = None


def compiled_flex():
    """One compiled flex_attention for the whole run (it recompiles per shape), with the
    recompile limit raised so that a long grid never falls back to the eager (unfused) path."""
    global _COMPILED_FLEX
    if _COMPILED_FLEX is None:
        from torch.nn.attention.flex_attention import flex_attention
        for name in ("recompile_limit", "cache_size_limit"):
            if hasattr(torch._dynamo.config, name):
                setattr(torch._dynamo.config, name, max(getattr(torch._dynamo.config, name), 256))
        _COMPILED_FLEX = torch.compile(flex_attention, dynamic=False)
    return _COMPILED_FLEX


class Problem:
    def __init__(self, seqlen: int, head_dim: int, causal: bool, total_tokens: int, hidden: int,
                 heads_kv: int | None = None, window: int | None = None, softcap: float = 0.0,
                 head_dim_v: int | None = None):
        self.batch = max(total_tokens // seqlen, 1)
        self.heads = hidden // head_dim
        self.heads_kv = heads_kv or self.heads
        head_dim_v = head_dim if head_dim_v is None else head_dim_v
        self.seqlen, self.head_dim, self.head_dim_v, self.causal = seqlen, head_dim, head_dim_v, causal
        self.window = window
        self.softcap = softcap
        self.window_size = (window - 1, 0 if causal else window - 1) if window else (-1, -1)
        shape = (self.batch, seqlen, self.heads, head_dim)
        shape_kv = (self.batch, seqlen, self.heads_kv, head_dim)
        shape_v = (self.batch, seqlen, self.heads_kv, head_dim_v)
        shape_o = (self.batch, seqlen, self.heads, head_dim_v)
        gen = torch.Generator(device="cuda").manual_seed(0)
        self.q, self.k, self.v, self.dout = (torch.randn(s, device="cuda", dtype=torch.bfloat16, generator=gen)
                                             for s in (shape, shape_kv, shape_v, shape_o))
        self.scale = 1.0 / math.sqrt(head_dim)
        if softcap:  # scaled so that the cap matters (|score| ~ softcap)
            self.q.mul_(2.0)
            self.k.mul_(2.0)
        # dash's backward needs its forward's out and LSE; a forward-only pair skips dash (make_fn).
        self.dash_backward = dash_has_backward(head_dim, head_dim_v)
        self.out = self.lse = None
        if self.dash_backward:
            self.out, self.lse = dash.attn_fwd(self.q, self.k, self.v, self.scale, causal,
                                               window_size=self.window_size, softcap=softcap)
        self.flops = attention_flops(self.batch, self.heads, seqlen, seqlen, head_dim, causal, backward=True,
                                     window_size=self.window_size, head_dim_v=head_dim_v)

    def gqa(self) -> bool:
        return self.heads_kv != self.heads

    def plan(self, deterministic: bool, schedule: str = "auto") -> dict | None:
        """dash's backward plan, or None for a pair without dash's backward."""
        if not self.dash_backward:
            return None
        return dash.attn_bwd_plan(self.q, self.k, self.causal, deterministic, schedule,
                                  window_size=self.window_size, softcap=self.softcap, head_dim_v=self.head_dim_v)

    def dash_fn(self, deterministic: bool, schedule: str = "auto"):
        def run():
            dash.attn_bwd(self.dout, self.q, self.k, self.v, self.out, self.lse, self.scale, self.causal,
                          deterministic, schedule=schedule, window_size=self.window_size, softcap=self.softcap)
        return run

    def sdpa_fn(self, backend, deterministic: bool):
        from torch.nn.attention import sdpa_kernel
        qh, kh, vh = (t.transpose(1, 2).detach().requires_grad_() for t in (self.q, self.k, self.v))
        doh = self.dout.transpose(1, 2)
        gqa = dict(enable_gqa=True) if self.gqa() else {}
        with sdpa_kernel([backend]):
            out = torch.nn.functional.scaled_dot_product_attention(qh, kh, vh, is_causal=self.causal,
                                                                   scale=self.scale, **gqa)

        def run():
            torch.use_deterministic_algorithms(deterministic)
            try:
                with sdpa_kernel([backend]):
                    torch.autograd.grad(out, (qh, kh, vh), doh, retain_graph=True)
            finally:
                torch.use_deterministic_algorithms(False)
        return run

    def flex_fn(self):
        from torch.nn.attention.flex_attention import create_block_mask
        compiled = compiled_flex()
        qh, kh, vh = (t.transpose(1, 2).detach().requires_grad_() for t in (self.q, self.k, self.v))
        doh = self.dout.transpose(1, 2)
        block_mask = None
        left, right = self.window_size
        if self.causal or self.window:
            def band(b, h, q, kv):
                visible = q >= kv if self.causal else (kv - q <= right) if right >= 0 else q == q
                return visible & (q - kv <= left) if left >= 0 else visible
            block_mask = create_block_mask(band, None, None, self.seqlen, self.seqlen)
        score_mod = None
        if self.softcap:
            cap = self.softcap

            def score_mod(score, b, h, q, kv):
                return cap * torch.tanh(score / cap)
        out = compiled(qh, kh, vh, block_mask=block_mask, score_mod=score_mod, scale=self.scale,
                       enable_gqa=self.gqa())

        def run():
            torch.autograd.grad(out, (qh, kh, vh), doh, retain_graph=True)
        return run

    def fa3_fn(self, deterministic: bool):
        fa3 = import_fa3()
        if fa3 is None:
            return None
        q, k, v = (t.detach().requires_grad_() for t in (self.q, self.k, self.v))
        out = fa3.flash_attn_func(q, k, v, softmax_scale=self.scale, causal=self.causal, deterministic=deterministic,
                                  window_size=self.window_size, softcap=self.softcap)
        out = out[0] if isinstance(out, tuple) else out

        def run():
            torch.autograd.grad(out, (q, k, v), self.dout, retain_graph=True)
        return run


_SHOWN_WARNINGS = set()


@contextlib.contextmanager
def peer_warnings():
    """Records the warnings raised while an implementation is set up and warmed up: where it
    fails they are its reason (SDPA gives why no kernel takes a shape, e.g. a head-dim limit,
    only as warnings before its 'No available kernel'; failure_reason() lists them and
    clears them); after a success they are shown as usual, each once per run."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield caught
    for w in caught:
        key = (str(w.message), w.category, w.filename, w.lineno)
        if key not in _SHOWN_WARNINGS:
            _SHOWN_WARNINGS.add(key)
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)


def failure_reason(err: Exception, caught: list) -> str:
    """One line for the log: the exception and the distinct warnings recorded with it."""
    first = (str(err).splitlines() or [""])[0][:160]
    why = list(dict.fromkeys(line.split(" (Triggered internally")[0].strip()
                             for w in caught for line in str(w.message).splitlines()[:1] if line))
    caught.clear()
    return f"{type(err).__name__}: {first}" + (f" [{'; '.join(why)[:400]}]" if why else "")


def make_fn(problem: Problem, impl: str):
    """The callable that runs `impl`'s backward once, or None where it cannot run here."""
    with peer_warnings() as caught:
        return _make_fn(problem, impl, caught)


def _make_fn(problem: Problem, impl: str, caught: list):
    from torch.nn.attention import SDPBackend
    try:
        if impl.startswith("dash") and not problem.dash_backward:
            return None  # forward-only head dims (main() prints the note once per head dim)
        if impl.startswith("dash"):
            deterministic = impl.startswith("dash_det")
            schedule = impl.split(":", 1)[1] if ":" in impl else "auto"
            if schedule != "auto" and problem.plan(deterministic, schedule)["schedule"] != schedule:
                return None  # this schedule does not apply to the shape (it would fall back)
            fn = problem.dash_fn(deterministic, schedule)
        elif impl in ("cudnn", "sdpa_flash_det") and (problem.window or problem.softcap):
            return None  # SDPA has no sliding window and no softcap
        elif impl == "cudnn":
            fn = problem.sdpa_fn(SDPBackend.CUDNN_ATTENTION, False)
        elif impl == "sdpa_flash_det":
            if problem.gqa():
                return None  # SDPA's flash backend has no GQA path
            fn = problem.sdpa_fn(SDPBackend.FLASH_ATTENTION, True)
        elif impl == "flex":
            fn = problem.flex_fn()
        elif impl in ("fa3", "fa3_det"):
            fn = problem.fa3_fn(impl == "fa3_det")
            if fn is None:
                return None
        else:
            raise ValueError(impl)
        for _ in range(5):  # warm-up (and compile, for flex)
            fn()
        torch.cuda.synchronize()
        return fn
    except Exception as err:  # a peer that cannot run this shape: report, keep going
        print(f"  {impl}: failed: {failure_reason(err, caught)}", flush=True)
        return None


def run_queued(step, seconds: float, count: int) -> None:
    """Calls `step` (which enqueues GPU work) at least `count` times and for at least
    `seconds`, keeping 4 steps queued ahead of the GPU: enough that the GPU never idles
    between calls (launch overhead stays out of the timings), few enough that the wall clock
    tracks the GPU's time."""
    t0, marks = time.perf_counter(), []
    while len(marks) < count or time.perf_counter() - t0 < seconds:
        if len(marks) >= 4:
            marks[-4].synchronize()
        step()
        marks.append(torch.cuda.Event())
        marks[-1].record()
    torch.cuda.synchronize()


def timed_call(fn, events: list) -> None:
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    events.append((start, end))


def time_ms(fn, reps: int, warm_s: float = 0.0, min_s: float = 0.0, window: list | None = None) -> float:
    """Median GPU time of one call: CUDA events around each call, calls back to back. First
    `fn` runs untimed for `warm_s` seconds, then at least `reps` calls and `min_s` seconds are
    timed. `window`, if given, receives the timed stretch's (start, end) in time.time() seconds."""
    run_queued(fn, warm_s, 0)
    events = []
    t0 = time.time()
    run_queued(lambda: timed_call(fn, events), min_s, reps)
    if window is not None:
        window.extend((t0, time.time()))
    return statistics.median(start.elapsed_time(end) for start, end in events)


SETTLE_S = 2.0  # the power controller's memory (measure_steady)


def measure_steady(problem: Problem, impls: list[str], reps: int, warm_s: float = 2.0, min_s: float = 1.0,
                   windows: dict | None = None) -> dict:
    """TFLOPS of each implementation in its own steady state (`--method steady`, the
    default). The H200 runs these kernels at its 700 W cap, and its power controller
    remembers the last ~2 s: after an idle or low-power stretch a kernel runs up to 8% fast
    for ~0.8 s, then dips ~10% below its steady speed and oscillates for another ~2 s
    (RESULTS.md, 2026-11-23 power trace). Short timed blocks therefore measured each
    implementation partly at its predecessor's clocks (the same kernel up to 15% apart in
    one job). Here each implementation runs back to back for `warm_s` seconds untimed, then
    for >= `reps` calls and `min_s` seconds timed: the speed it keeps when it runs on its
    own for a while.

    Setting up a problem's implementations (inputs, the forward that gives out and LSE) leaves
    the GPU near idle, so the first implementation's warm-up would start from there and every
    other one from its predecessor's full load, and a short warm-up favoured the first one
    (RESULTS.md item 156). The first one runs SETTLE_S seconds untimed before any warm-up, so
    each starts from a loaded GPU.

    `windows`, if given, receives each timed implementation's (start, end) in time.time() seconds
    (for --clocks)."""
    fns = {impl: make_fn(problem, impl) for impl in impls}
    live = [fn for fn in fns.values() if fn is not None]
    if live:
        run_queued(live[0], SETTLE_S, 0)
    tflops = {}
    for impl in impls:
        if fns[impl] is None:
            tflops[impl] = None
            continue
        window = windows.setdefault(impl, []) if windows is not None else None
        tflops[impl] = problem.flops / (time_ms(fns[impl], reps, warm_s, min_s, window) * 1e-3) / 1e12
    return tflops


def measure_interleaved(problem: Problem, impls: list[str], reps: int, warm_s: float = 2.0,
                        min_s: float = 1.0) -> dict:
    """TFLOPS of each implementation, interleaved call by call (`--method interleave`): every
    cycle calls each implementation once, in a fresh random order, with CUDA events around
    each call; `warm_s` seconds of untimed cycles let the power controller settle on the
    mix, then at least `reps` cycles and `min_s` seconds are timed (median per
    implementation). All implementations then run at the same clocks: this compares work
    per clock. It is not each kernel's own speed: a slow, low-power peer in the mix (FA2's
    deterministic backward) lifts everyone's clocks (hdim 128 full 16k: 615-638 TFLOPS
    here, 567-582 in steady state), and a kernel that draws more power per clock than the others is
    flattered (see measure_steady)."""
    fns = {impl: make_fn(problem, impl) for impl in impls}
    live = [impl for impl in impls if fns[impl] is not None]
    if not live:
        return {impl: None for impl in impls}
    rng = random.Random(0)

    def cycle(events):
        order = live[:]
        rng.shuffle(order)
        for impl in order:
            if events is None:
                fns[impl]()
            else:
                timed_call(fns[impl], events[impl])

    run_queued(lambda: cycle(None), warm_s, 1)
    events = {impl: [] for impl in live}
    run_queued(lambda: cycle(events), min_s, reps)
    return {impl: problem.flops / (statistics.median(s.elapsed_time(e) for s, e in events[impl]) * 1e-3) / 1e12
            if impl in events else None for impl in impls}


def model_agreement(problem: Problem, tflops: dict, reduce: float, miss_cost: float) -> tuple[str, str, bool] | None:
    """The DAG model's ranking of the measured deterministic schedules next to the
    measured ranking. Pairs measured within 3% of each other count as ties (either order
    agrees)."""
    from dash.schedule_sim import predict
    measured = {k.split(":", 1)[1]: v for k, v in tflops.items() if k.startswith("dash_det:") and v}
    if len(measured) < 2:
        return None
    if problem.gqa() or problem.head_dim_v != problem.head_dim:
        return None  # predict() models MHA with d == d_v
    grid = problem.plan(True)["grid"]
    model = predict(problem.batch, problem.heads, problem.seqlen, problem.seqlen, problem.head_dim,
                    problem.causal, grid=grid, reduce=reduce, schedules=list(measured), miss_cost=miss_cost)
    by_model = sorted(measured, key=lambda s: model[s][0])
    by_measure = sorted(measured, key=lambda s: -measured[s])
    agree = all((model[a][0] <= model[b][0]) == (measured[a] >= measured[b]) or
                abs(measured[a] - measured[b]) <= 0.03 * max(measured[a], measured[b])
                for i, a in enumerate(by_model) for b in by_model[i + 1:])
    return " > ".join(by_model), " > ".join(by_measure), agree


def print_clocks(results: list[dict], impls: list[str], sampler: ClockSampler, width: int) -> None:
    """--clocks: each result's implementations as "TFLOPS per GHz @ MHz / W" (the mean SM clock and
    board power through the timed window), stored in the results as "clocks"."""
    print("work a clock: TFLOPS per GHz @ mean SM MHz / board W through each timed window (nvidia-smi)")
    print(f"{'hdim':>{width}} {'seqlen':>6} {'mask':>6} " + " ".join(f"{LABELS[i][:20]:>20}" for i in impls))
    for r in results:
        r["clocks"] = clocks_of(sampler, r["tflops"], r["windows"])
        cells = [f"{clock_cell(r['clocks'][i]) if i in r['clocks'] else '-':>20}" for i in impls]
        mask = "causal" if r["causal"] else "full"
        print(f"{r['hdim']:>{width}} {r['seqlen']:>6} {mask:>6} " + " ".join(cells), flush=True)


def plot(results: list[dict], impls: list[str], out_dir: pathlib.Path) -> None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib missing: no plot")
        return
    for hdim in dict.fromkeys(r["hdim"] for r in results):  # "128", "192x128", in run order
        fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), sharey=True)
        for ax, causal in zip(axes, (False, True)):
            rows = sorted((r for r in results if r["hdim"] == hdim and r["causal"] == causal),
                          key=lambda r: r["seqlen"])
            for impl in impls:
                pts = [(r["seqlen"], r["tflops"].get(impl)) for r in rows if r["tflops"].get(impl)]
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=LABELS.get(impl, impl))
            ax.set_xscale("log", base=2)
            ax.set_title(f"hdim {hdim}, {'causal' if causal else 'full'} mask")
            ax.set_xlabel("seqlen (16k tokens total)")
            ax.grid(alpha=0.3)
        axes[0].set_ylabel("backward TFLOPS")
        labelled = [ax for ax in axes if ax.get_legend_handles_labels()[0]]
        if labelled:  # a run of one mask leaves the other panel empty
            labelled[0].legend(fontsize=8)
        fig.suptitle(f"Attention backward, bf16, {torch.cuda.get_device_name()}")
        fig.tight_layout()
        path = out_dir / f"bench_bwd_hdim{hdim}.png"
        fig.savefig(path, dpi=110)
        print(f"wrote {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hdim", type=parse_hdim, nargs="+", default=DEFAULT_HDIMS,
                        help='head dims: "128" (q, k, v) or "192x128" (q and k 192, v 128); '
                             f"one of {', '.join(head_dim_name(*p) for p in HEAD_DIMS)} (default: 64 128)")
    parser.add_argument("--seqlen", type=int, nargs="+", default=[512, 1024, 2048, 4096, 8192, 16384])
    parser.add_argument("--mask", choices=["full", "causal"], nargs="+", default=["full", "causal"])
    parser.add_argument("--impl", choices=IMPLS, nargs="+", default=DEFAULT_IMPLS)
    parser.add_argument("--method", choices=["steady", "interleave"], default="steady",
                        help="steady: each implementation alone, after --warm-s s of untimed calls "
                             "(measure_steady); interleave: every implementation once per cycle in random "
                             "order, all at the same clocks (measure_interleaved)")
    parser.add_argument("--reps", type=int, default=30, help="timed calls per implementation (at least)")
    parser.add_argument("--warm-s", type=float, default=2.0, help="untimed seconds before timing")
    parser.add_argument("--min-s", type=float, default=1.0, help="timed seconds (at least)")
    parser.add_argument("--total-tokens", type=int, default=16384)
    parser.add_argument("--hidden", type=int, default=2048, help="query heads x head_dim")
    parser.add_argument("--heads-kv", type=int, default=None, help="K/V heads (GQA / MQA; default: MHA)")
    parser.add_argument("--window", type=int, default=None,
                        help="sliding window: each query sees this many keys (window_size (W - 1, 0) with causal)")
    parser.add_argument("--softcap", type=float, default=0.0, help="score softcap (0: off; inputs scaled by 2)")
    parser.add_argument("--clocks", action="store_true",
                        help="sample the SM clock and board power (nvidia-smi) through each timed window and "
                             "print each implementation's MHz, W and TFLOPS per GHz (the work a clock) after "
                             "the grid (steady method only; bench/gpu_clocks.py)")
    parser.add_argument("--out", type=pathlib.Path, default=ROOT / "bench" / "out")
    parser.add_argument("--model-reduce", type=float, default=0.5,
                        help="reduction cost relative to one tile's compute, for the DAG model's ranking")
    parser.add_argument("--model-miss-cost", type=float, default=0.3,
                        help="the model's slowdown of a step whose round overflows L2 (0: the paper's model)")
    args = parser.parse_args()
    if args.clocks and args.method != "steady":
        parser.error("--clocks needs --method steady (interleaved implementations share one clock)")
    dash_impls = [i for i in args.impl if i.startswith("dash")]
    if dash_impls and not dash.library_loaded:
        sys.exit("error: dash's op library is not built or does not load: run 'make build'")
    args.out.mkdir(parents=True, exist_ok=True)

    results = []
    width = max(4, *(len(head_dim_name(*p)) for p in args.hdim))
    header = (f"{'hdim':>{width}} {'seqlen':>6} {'mask':>6} " +
              " ".join(f"{LABELS[i][:14]:>14}" for i in args.impl))
    how = (f"{'each alone' if args.method == 'steady' else 'interleaved call by call'}: {args.warm_s:g} s untimed, "
           f"then >= {args.reps} calls and {args.min_s:g} s timed, median call")
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}, backward TFLOPS ({how})")
    print(header, flush=True)
    sampler = ClockSampler.start() if args.clocks else None
    for head_dim, head_dim_v in args.hdim:
        hdim = head_dim_name(head_dim, head_dim_v)
        if dash_impls and not dash_has_backward(head_dim, head_dim_v):
            peers = [i for i in args.impl if not i.startswith("dash")]
            print(f"note: hdim {hdim}: dash has no backward for these head dims yet (forward only): "
                  f"{', '.join(dash_impls)} not run" + (f"; {', '.join(peers)} still run" if peers else
                                                         "; nothing else asked for: skipped"), flush=True)
            if not peers:
                continue
        for mask in args.mask:
            for seqlen in args.seqlen:
                problem = Problem(seqlen, head_dim, mask == "causal", args.total_tokens, args.hidden, args.heads_kv,
                                  args.window, args.softcap, head_dim_v=head_dim_v)
                windows = {} if sampler is not None else None
                if args.method == "steady":
                    tflops = measure_steady(problem, args.impl, args.reps, args.warm_s, args.min_s, windows)
                else:
                    tflops = measure_interleaved(problem, args.impl, args.reps, args.warm_s, args.min_s)
                ranking = (None if args.window or args.softcap else
                           model_agreement(problem, tflops, args.model_reduce, args.model_miss_cost))
                results.append(dict(hdim=hdim, head_dim=head_dim, head_dim_v=head_dim_v, seqlen=seqlen,
                                    causal=mask == "causal", window=args.window,
                                    softcap=args.softcap,
                                    batch=problem.batch,
                                    heads=problem.heads, heads_kv=problem.heads_kv, tflops=tflops,
                                    plan=problem.plan(True), model_ranking=ranking, windows=windows))
                cells = " ".join(f"{tflops[i]:>14.1f}" if tflops[i] else f"{'-':>14}" for i in args.impl)
                rank_text = f"  model: {ranking[0]} | measured: {ranking[1]} | {'agree' if ranking[2] else 'DISAGREE'}" \
                    if ranking else ""
                print(f"{hdim:>{width}} {seqlen:>6} {mask:>6} {cells}{rank_text}", flush=True)
                del problem
                torch.cuda.empty_cache()
    if sampler is not None:
        sampler.stop()
        print_clocks(results, args.impl, sampler, width)
    for r in results:
        r.pop("windows")
    ranked = [r["model_ranking"] for r in results if r["model_ranking"]]
    if ranked:
        print(f"model ranking agrees with the measured one at {sum(r[2] for r in ranked)}/{len(ranked)} points")
    meta = dict(date=datetime.datetime.now().isoformat(timespec="seconds"), gpu=torch.cuda.get_device_name(),
                torch=torch.__version__, cudnn=torch.backends.cudnn.version(), method=args.method,
                reps=args.reps, warm_s=args.warm_s, min_s=args.min_s,
                command=" ".join(sys.argv))
    (args.out / "bench_bwd.json").write_text(json.dumps(dict(meta=meta, results=results), indent=1))
    print(f"wrote {args.out / 'bench_bwd.json'}")
    plot(results, args.impl, args.out)


if __name__ == "__main__":
    main()
