"""A few small forward and backward calls (both masks, both head dims, every backward
schedule, deterministic or not) for running under compute-sanitizer (memcheck / synccheck / racecheck):

  compute-sanitizer --tool memcheck python tools/sanitize_smoke.py
"""
import pathlib
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests"))
import dash  # noqa: E402,F401  (loads the op library)
from gpu_helpers import make_inputs, run_dash  # noqa: E402

CASES = [  # batch, seqlen_q, seqlen_k, heads, head_dim, causal, schedule
    (1, 300, 300, 2, 128, False, "shift"),
    (1, 300, 300, 2, 128, True, "symmetric_shift"),
    (1, 257, 129, 2, 64, True, "descending"),
    (2, 129, 300, 1, 64, False, "ascending"),
    (1, 300, 300, 2, 64, True, "fa3_baseline"),
]

for batch, sq, sk, heads, hd, causal, _ in CASES:  # forward, a 12-CTA grid so CTAs run several tiles
    q, k, v = (torch.randn(batch, s, heads, hd, device="cuda", dtype=torch.bfloat16) for s in (sq, sk, sk))
    torch.ops.dash.attn_fwd(q, k, v, hd ** -0.5, causal, False, 120)
    torch.cuda.synchronize()
    print("fwd", batch, sq, sk, heads, hd, causal, "ok", flush=True)

for batch, sq, sk, heads, hd, causal, schedule in CASES:
    for deterministic in (False, True):
        inputs = make_inputs(batch, sq, sk, heads, hd, torch.bfloat16, causal, seed=1)
        grads = run_dash(inputs, causal, deterministic=deterministic, schedule=schedule, sm_margin=120)
        torch.cuda.synchronize()
        print(batch, sq, sk, heads, hd, causal, schedule, deterministic, "ok", flush=True)
