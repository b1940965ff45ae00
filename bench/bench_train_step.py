"""Time one full training step (forward + backward + gradient clipping + AdamW step) of the
example GPT (examples/train_gpt.py) with different attention implementations, in one
process, same model config, same batch.

Variants (default: the first three):
  dash_det          dash, deterministic=True, under torch.use_deterministic_algorithms(True):
                    what `train_gpt.py --deterministic` runs, the whole step reproducible
  dash              dash, deterministic=False (unordered dQ accumulation)
  cudnn             SDPA with the cuDNN backend (non-deterministic), the usual fast path
  dash_det_noflag   dash deterministic=True without the global flag (the kernel's cost alone)
  sdpa_flash_det    SDPA flash (FlashAttention-2) under use_deterministic_algorithms(True):
                    stock PyTorch's deterministic option

Each variant gets a fresh model from the same seed, trains --warmup steps, then --reps
steps are timed with CUDA events around each step (back to back, one synchronize at the
end), median reported. --rounds > 1 repeats the whole sequence of variants (interleaved)
and takes the median over all rounds. CUBLAS_WORKSPACE_CONFIG=:4096:8 is set for the whole
process (every variant), since the deterministic ones need it before CUDA starts. The
learning rate is constant (the schedule does not matter for time).

  python bench/bench_train_step.py                               # train_gpt.py defaults
  python bench/bench_train_step.py --seqlen 8192 --batch-size 2 --variants dash_det dash cudnn sdpa_flash_det

Prints a markdown table (ms/step, tokens/s, time relative to cuDNN) and writes
<out>/bench_train_step.json.
"""
from __future__ import annotations

import os

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # before CUDA starts (see the docstring)

import argparse  # noqa: E402
import dataclasses  # noqa: E402
import datetime  # noqa: E402
import gc  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import pathlib  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import torch  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))
import train_gpt as tg  # noqa: E402

VARIANTS = {
    # name: (attn, deterministic kernel, sdpa backend, torch.use_deterministic_algorithms, label)
    "dash_det": ("dash", True, None, True, "dash det"),
    "dash": ("dash", False, None, False, "dash non-det"),
    "cudnn": ("sdpa", False, "cudnn", False, "SDPA cuDNN (non-det)"),
    "dash_det_noflag": ("dash", True, None, False, "dash det, no global flag"),
    "sdpa_flash_det": ("sdpa", True, "flash", True, "SDPA flash det (FA2)"),
}
DEFAULT_VARIANTS = ["dash_det", "dash", "cudnn"]


class StepTimer:
    """Per-step times: CUDA events around each step (one synchronize at the end) on a GPU,
    perf_counter with a synchronize per step on the CPU smoke path."""

    def __init__(self, device: torch.device):
        self.cuda = device.type == "cuda"
        self.marks = []

    def time(self, fn) -> None:
        if self.cuda:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            self.marks.append((start, end))
        else:
            t0 = time.perf_counter()
            fn()
            self.marks.append((time.perf_counter() - t0) * 1e3)

    def results_ms(self) -> list[float]:
        if self.cuda:
            torch.cuda.synchronize()
            return [start.elapsed_time(end) for start, end in self.marks]
        return list(self.marks)


def bench_variant(name: str, cfg: tg.GPTConfig, device: torch.device, inputs, targets, warmup: int,
                  reps: int) -> dict:
    attn, det_kernel, backend, flag, _ = VARIANTS[name]
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    with tg.determinism(flag, cfg.seed):
        model = tg.build_model(cfg, attn, det_kernel, device, backend)
        optimizer = tg.make_optimizer(model, cfg)
        losses = []

        def step():
            loss, _ = tg.train_step(model, optimizer, inputs, targets, cfg.grad_clip)
            losses.append(loss)

        for _ in range(warmup):
            step()
        if device.type == "cuda":
            torch.cuda.synchronize()
        timer = StepTimer(device)
        wall0 = time.perf_counter()
        for _ in range(reps):
            timer.time(step)
        ms = timer.results_ms()  # synchronizes
        wall_ms = (time.perf_counter() - wall0) * 1e3 / reps
        final_loss = losses[-1].item()
        peak_gib = torch.cuda.max_memory_allocated(device) / 2**30 if device.type == "cuda" else None
    del model, optimizer, losses
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()
    return dict(ms=ms, wall_ms_per_step=wall_ms, final_loss=final_loss, peak_memory_gib=peak_gib)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--variants", nargs="+", choices=list(VARIANTS), default=DEFAULT_VARIANTS)
    parser.add_argument("--warmup", type=int, default=10, help="untimed steps per variant (default %(default)s)")
    parser.add_argument("--reps", type=int, default=30, help="timed steps per variant and round (default %(default)s)")
    parser.add_argument("--rounds", type=int, default=1,
                        help="repeat all variants this many times, interleaved (default %(default)s)")
    parser.add_argument("--out", type=pathlib.Path, default=ROOT / "bench" / "out")
    parser.add_argument("--device", default="cuda", help=argparse.SUPPRESS)  # "cpu": smoke test (sdpa math)
    tg.add_config_args(parser)
    args = parser.parse_args()
    device = torch.device(args.device)
    for name in args.variants:
        if device.type == "cpu" and VARIANTS[name][0] == "sdpa":
            VARIANTS[name] = VARIANTS[name][:2] + ("math",) + VARIANTS[name][3:]
        tg.require_environment(VARIANTS[name][0], device)
    cfg = tg.config_from_args(args)

    data = tg.SyntheticLanguage(cfg)
    inputs, targets = data.batch(0, device)
    tokens = cfg.batch_size * cfg.seqlen
    with torch.device("meta"):  # count parameters without allocating or initialising them
        n_params = sum(p.numel() for p in tg.GPT(cfg).parameters())
    gpu = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    print(f"{gpu}, torch {torch.__version__}: GPT {cfg.layers} layers x d_model {cfg.d_model} "
          f"({cfg.heads} heads x {cfg.head_dim}), {n_params / 1e6:.1f}M parameters, batch {cfg.batch_size} x "
          f"seqlen {cfg.seqlen} = {tokens} tokens; {'bf16 autocast' if device.type == 'cuda' else 'fp32'}, AdamW; median of {args.reps} x {args.rounds} "
          f"steps after {args.warmup} warm-up steps", flush=True)

    times = {name: [] for name in args.variants}
    runs = {name: [] for name in args.variants}
    for round_index in range(args.rounds):
        for name in args.variants:
            try:
                result = bench_variant(name, cfg, device, inputs, targets, args.warmup, args.reps)
            except Exception as err:  # keep going: report the variant as failed
                print(f"  {name}: failed: {type(err).__name__}: {str(err).splitlines()[0][:200]}", flush=True)
                runs[name].append(dict(error=f"{type(err).__name__}: {err}"))
                continue
            times[name] += result["ms"]
            runs[name].append(result)
            print(f"  round {round_index + 1}, {name}: median {statistics.median(result['ms']):.2f} ms/step, "
                  f"final loss {result['final_loss']:.4f}", flush=True)

    summary = {}
    for name in args.variants:
        if times[name]:
            median = statistics.median(times[name])
            summary[name] = dict(label=VARIANTS[name][4], median_ms=median, min_ms=min(times[name]),
                                 tokens_per_s=tokens / median * 1e3)
        else:
            summary[name] = dict(label=VARIANTS[name][4], median_ms=None)
    ref = summary.get("cudnn", {}).get("median_ms")
    for entry in summary.values():
        entry["time_vs_cudnn"] = entry["median_ms"] / ref if ref and entry["median_ms"] else None
        entry["speed_vs_cudnn"] = ref / entry["median_ms"] if ref and entry["median_ms"] else None

    print("\n| variant | ms/step (median) | min | tokens/s | time vs cuDNN |\n|---|---:|---:|---:|---:|")
    for name, entry in summary.items():
        if entry["median_ms"] is None:
            print(f"| {entry['label']} | failed | | | |")
            continue
        rel = f"{entry['time_vs_cudnn']:.3f}" if entry["time_vs_cudnn"] else "-"
        print(f"| {entry['label']} | {entry['median_ms']:.2f} | {entry['min_ms']:.2f} | "
              f"{entry['tokens_per_s']:,.0f} | {rel} |")
    print("(time vs cuDNN: median step time / cuDNN's; < 1 is faster)")

    finite = all(math.isfinite(r["final_loss"]) for rs in runs.values() for r in rs if "final_loss" in r)
    if not finite:
        print("WARNING: a variant ended with a non-finite loss")
    args.out.mkdir(parents=True, exist_ok=True)
    meta = dict(date=datetime.datetime.now().isoformat(timespec="seconds"), device=gpu, torch=torch.__version__,
                cudnn=torch.backends.cudnn.version() if device.type == "cuda" else None, parameters=n_params,
                tokens_per_step=tokens, warmup=args.warmup, reps=args.reps, rounds=args.rounds,
                cublas_workspace_config=os.environ.get("CUBLAS_WORKSPACE_CONFIG"), command=" ".join(sys.argv))
    record = dict(meta=meta, config=dataclasses.asdict(cfg), summary=summary, runs=runs)
    path = args.out / "bench_train_step.json"
    path.write_text(json.dumps(record, indent=1))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
