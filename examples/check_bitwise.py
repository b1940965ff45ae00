"""Bitwise reproducibility of a whole training run with dash: train the example GPT
(examples/train_gpt.py) twice in this process with dash in deterministic mode (a fresh
model from the same seed each time, the same data) and require exactly equal losses at
every step and an identical SHA256 of the final weights.

Optionally (on by default) one more run with SDPA's cuDNN attention (non-deterministic, the
usual fast path) as a yardstick: the maximum |loss_dash - loss_sdpa| over the curve shows
that dash trains the same model, not just a reproducible one. --nondet-pair also trains
twice with dash's non-deterministic backward and reports whether those two runs differ.

  python examples/check_bitwise.py                       # defaults of train_gpt.py (300 steps)
  python examples/check_bitwise.py --steps 50 --skip-sdpa
  python examples/check_bitwise.py --steps 5 --seqlen 256 --layers 1   # smoke test
  python examples/check_bitwise.py --packed --steps 50   # packed documents: flash_attn_varlen_func

Prints a summary, writes <out>/check_bitwise.json and <out>/check_bitwise.png (the curves,
and the per-step difference dash - sdpa), and exits with status 1 if the deterministic
runs differ in any bit (with --packed: check_bitwise_packed.json / .png).
"""
from __future__ import annotations

import argparse
import datetime
import gc
import json
import pathlib
import sys

import train_gpt as tg  # examples/ is on sys.path when this script runs

tg.set_cublas_workspace()  # before CUDA starts: the deterministic runs need it

import torch  # noqa: E402


def first_difference(a: list[float], b: list[float]) -> int | None:
    """First step at which two loss curves differ (also if one is shorter), else None."""
    for step, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return step
    return None if len(a) == len(b) else min(len(a), len(b))


def run(cfg, attn: str, deterministic: bool, device: str, sdpa_backend: str | None, log_every: int,
        eval_every: int) -> dict:
    if attn == "sdpa":
        sdpa_backend = sdpa_backend or tg.default_sdpa_backend(torch.device(device), deterministic, cfg.packed)
    print(f"\n=== {attn}{' (' + sdpa_backend + ')' if attn == 'sdpa' else ''}, "
          f"{'deterministic' if deterministic else 'non-deterministic'} ===", flush=True)
    result = tg.train(cfg, attn, deterministic, device, sdpa_backend, log_every,
                      log=lambda text: print(text, flush=True), eval_every=eval_every)
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
    return result


def compare_pair(a: dict, b: dict) -> dict:
    diff_step = first_difference(a["loss"], b["loss"])
    return dict(identical_losses=diff_step is None, first_differing_step=diff_step,
                identical_grad_norms=a["grad_norm"] == b["grad_norm"],
                identical_eval=a["eval"] == b["eval"],
                identical_weights=a["weights_sha256"] == b["weights_sha256"],
                weights_sha256=[a["weights_sha256"], b["weights_sha256"]],
                max_abs_loss_diff=max((abs(x - y) for x, y in zip(a["loss"], b["loss"])), default=0.0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--skip-sdpa", action="store_true", help="no SDPA (cuDNN) comparison run")
    parser.add_argument("--sdpa-backend", choices=tg.SDPA_BACKENDS, default=None,
                        help="backend of the comparison run (default cudnn, non-deterministic; "
                             "efficient with --packed)")
    parser.add_argument("--nondet-pair", action="store_true",
                        help="also train twice with dash's non-deterministic backward and report whether they differ")
    parser.add_argument("--out", type=pathlib.Path, default=tg.ROOT / "examples" / "out")
    parser.add_argument("--log-every", type=int, default=50)
    parser.add_argument("--eval-every", type=int, default=50, help="held-out evaluation every N steps")
    # Hidden, for a CPU smoke test of this driver: --device cpu --attn sdpa (math backend, fp32).
    parser.add_argument("--device", default="cuda", help=argparse.SUPPRESS)
    parser.add_argument("--attn", choices=["dash", "sdpa"], default="dash", help=argparse.SUPPRESS)
    tg.add_config_args(parser)
    tg.add_packing_args(parser)
    args = parser.parse_args()
    tg.require_environment(args.attn, args.device)
    cfg = tg.config_from_args(args)
    sdpa_backend = args.sdpa_backend or tg.default_sdpa_backend(torch.device(args.device), False, cfg.packed)

    det = [run(cfg, args.attn, True, args.device, None, args.log_every, args.eval_every) for _ in range(2)]
    det_cmp = compare_pair(*det)
    nondet_cmp = None
    if args.nondet_pair:
        nondet = [run(cfg, args.attn, False, args.device, None, args.log_every, args.eval_every) for _ in range(2)]
        nondet_cmp = compare_pair(*nondet)
    sdpa = None
    if not args.skip_sdpa:
        sdpa = run(cfg, "sdpa", False, args.device, sdpa_backend, args.log_every, args.eval_every)

    print("\n=== summary ===")
    ok = det_cmp["identical_losses"] and det_cmp["identical_weights"] and det_cmp["identical_grad_norms"]
    print(f"{det[0]['label']}, 2 runs, {len(det[0]['loss'])} steps: "
          f"losses {'IDENTICAL' if det_cmp['identical_losses'] else 'DIFFER'} (exact float equality)"
          + ("" if det_cmp["identical_losses"] else
             f", first at step {det_cmp['first_differing_step']}, max |diff| {det_cmp['max_abs_loss_diff']:.3e}"))
    print(f"  grad norms {'identical' if det_cmp['identical_grad_norms'] else 'differ'}; held-out losses "
          f"{'identical' if det_cmp['identical_eval'] else 'differ'}; weights sha256 "
          f"{det[0]['weights_sha256'][:16]}... vs {det[1]['weights_sha256'][:16]}... -> "
          f"{'IDENTICAL' if det_cmp['identical_weights'] else 'DIFFER'}")
    if nondet_cmp:
        print(f"{nondet[0]['label']}, 2 runs: losses {'identical' if nondet_cmp['identical_losses'] else 'differ'}"
              + ("" if nondet_cmp["identical_losses"] else
                 f" (first at step {nondet_cmp['first_differing_step']}, "
                 f"max |diff| {nondet_cmp['max_abs_loss_diff']:.3e})")
              + f"; weights {'identical' if nondet_cmp['identical_weights'] else 'differ'}")
    sdpa_summary = None
    if sdpa:
        diffs = [d - s for d, s in zip(det[0]["loss"], sdpa["loss"])]
        abs_diffs = [abs(x) for x in diffs]
        tail = abs_diffs[-max(1, len(abs_diffs) // 10):]
        sdpa_summary = dict(label=sdpa["label"], max_abs_loss_diff=max(abs_diffs),
                            max_abs_loss_diff_step=abs_diffs.index(max(abs_diffs)),
                            mean_abs_loss_diff=sum(abs_diffs) / len(abs_diffs),
                            mean_abs_loss_diff_last_10pct=sum(tail) / len(tail),
                            final_loss_dash=det[0]["final_loss"], final_loss_sdpa=sdpa["final_loss"])
        print(f"{det[0]['label']} vs {sdpa['label']}: max |loss diff| {sdpa_summary['max_abs_loss_diff']:.4f} "
              f"(step {sdpa_summary['max_abs_loss_diff_step']}), mean {sdpa_summary['mean_abs_loss_diff']:.4f}, "
              f"mean over the last 10% {sdpa_summary['mean_abs_loss_diff_last_10pct']:.4f}; final loss "
              f"{det[0]['final_loss']:.4f} vs {sdpa['final_loss']:.4f}")
    print("median step time: " + ", ".join(f"{r['label']} {r['median_step_ms']:.1f} ms"
                                           for r in det[:1] + ([sdpa] if sdpa else [])))
    print("PASS: bitwise identical training runs" if ok else "FAIL: the deterministic runs differ")

    args.out.mkdir(parents=True, exist_ok=True)
    record = dict(date=datetime.datetime.now().isoformat(timespec="seconds"), command=" ".join(sys.argv),
                  passed=ok, deterministic=det_cmp, nondeterministic=nondet_cmp, sdpa=sdpa_summary,
                  runs=det + ([sdpa] if sdpa else []) + (nondet if args.nondet_pair else []))
    stem = "check_bitwise_packed" if cfg.packed else "check_bitwise"  # packed runs do not overwrite the others
    (args.out / f"{stem}.json").write_text(json.dumps(record, indent=1))
    print(f"wrote {args.out / (stem + '.json')}")
    curves = {f"{det[0]['label']}, run 1": det[0]["loss"], f"{det[1]['label']}, run 2": det[1]["loss"]}
    diff = None
    if sdpa:
        curves[sdpa["label"]] = sdpa["loss"]
        diff = ("dash - sdpa", [d - s for d, s in zip(det[0]["loss"], sdpa["loss"])])
    verdict = "bitwise identical" if ok else f"DIFFER from step {det_cmp['first_differing_step']}"
    title = (f"GPT {cfg.layers}x{cfg.d_model}, seqlen {cfg.seqlen}: two runs of {det[0]['label']} {verdict}\n"
             f"{det[0]['device_name']}, weights sha256 {det[0]['weights_sha256'][:16]}...")
    if tg.plot_losses(curves, args.out / f"{stem}.png", title, uniform=det[0]["uniform_loss"],
                      floor=det[0]["bigram_floor"], diff=diff):
        print(f"wrote {args.out / (stem + '.png')}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
