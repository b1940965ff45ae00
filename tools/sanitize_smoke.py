"""A few small forward and backward calls (both masks, both head dims, every backward
schedule, deterministic or not, GQA with split query-head groups, packed batches with 0- and
1-token documents) for
running under compute-sanitizer (memcheck / synccheck / racecheck):

  compute-sanitizer --tool memcheck python tools/sanitize_smoke.py
"""
import itertools
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
SPLIT = [  # batch, seqlen_q, seqlen_k, heads, heads_kv, head_dim, causal: groups split over parts (12 CTAs)
    (1, 300, 300, 4, 1, 128, True),
    (1, 129, 257, 4, 2, 64, False),
]
VARLEN = [  # lengths q, lengths k, heads, heads_kv, head_dim, causal, schedule
    ([300, 0, 1, 129], None, 4, 2, 128, True, "diagonal"),
    ([300, 0, 1, 129], [200, 3, 0, 260], 2, 1, 64, True, "descending"),
    ([17, 250, 128], None, 2, 2, 64, False, "ascending"),
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

for batch, sq, sk, heads, heads_kv, hd, causal in SPLIT:
    inputs = make_inputs(batch, sq, sk, heads, hd, torch.bfloat16, causal, seed=2, heads_kv=heads_kv)
    parts = dash.attn_bwd_plan(inputs["q"], inputs["k"], causal, True, "auto", 120)["kv_parts"]
    assert parts > 1, parts
    for deterministic in (False, True):
        run_dash(inputs, causal, deterministic=deterministic, sm_margin=120)
        torch.cuda.synchronize()
        print("split", batch, sq, sk, heads, heads_kv, hd, causal, parts, deterministic, "ok", flush=True)

for lengths_q, lengths_k, heads, heads_kv, hd, causal, schedule in VARLEN:
    lengths_k = lengths_k or lengths_q
    cu_q, cu_k = (torch.tensor([0, *itertools.accumulate(n)], dtype=torch.int32, device="cuda")
                  for n in (lengths_q, lengths_k))
    q, dout = (torch.randn(sum(lengths_q), heads, hd, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    k, v = (torch.randn(sum(lengths_k), heads_kv, hd, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    args = (cu_q, cu_k, max(lengths_q), max(lengths_k))
    out, lse = dash.attn_varlen_fwd(q, k, v, *args, causal=causal, sm_margin=120)
    for deterministic in (False, True):
        dash.attn_varlen_bwd(dout, q, k, v, out, lse, *args, causal=causal, deterministic=deterministic,
                             schedule=schedule, sm_margin=120)
        torch.cuda.synchronize()
        print("varlen", lengths_q, lengths_k, heads, heads_kv, hd, causal, schedule, deterministic, "ok", flush=True)
