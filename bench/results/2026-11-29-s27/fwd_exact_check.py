"""Forward-only check of the rows item 207's fixed offset got wrong (a row that sees one key: window
(0, 0), the first causal row of 1 x 1), on a library with only bf16 softcap forward units: out and
LSE against the fp64 reference by the tests' rules (tests/gpu_helpers.py), softcap 2 / 5 / 20 / 30 /
50, hdim 128 / 192 / 256. Run from the repository root: python3 bench/results/2026-11-29-s27/fwd_exact_check.py"""
import sys

import torch

sys.path.insert(0, "tests")
import dash  # noqa: E402
from dash import reference  # noqa: E402
from gpu_helpers import assert_close_fa_style, check_lse  # noqa: E402

failures = 0
for head_dim in (128, 192, 256):
    for softcap in (2.0, 5.0, 20.0, 30.0, 50.0):
        for sq, sk, causal, window in ((500, 129, False, (0, 0)), (1, 1, True, (100, 0)), (1000, 700, False, (0, 0)),
                                       (777, 777, True, (-1, -1)), (2049, 2049, False, (-1, -1))):
            g = torch.Generator(device="cuda").manual_seed(head_dim + sq + int(softcap))
            q, k, v = (torch.randn(2, s, 4, head_dim, generator=g, device="cuda", dtype=torch.bfloat16)
                       for s in (sq, sk, sk))
            a = 0.8 * softcap ** 0.5
            q, k = (q * a).to(torch.bfloat16), (k * a).to(torch.bfloat16)
            out, lse = dash.attn_fwd(q, k, v, causal=causal, window_size=window, softcap=softcap)
            ref_out, ref_lse = reference.attention_forward(q.double(), k.double(), v.double(), None, causal,
                                                           compute_dtype=torch.float64, window_size=window,
                                                           softcap=softcap)
            pt_out, _ = reference.attention_forward(q, k, v, None, causal, compute_dtype=torch.bfloat16,
                                                    window_size=window, softcap=softcap)
            case = f"hdim {head_dim} cap {softcap:g} {sq}x{sk} causal={causal} window={window}"
            try:
                assert_close_fa_style("out", out, ref_out, pt_out, torch.bfloat16)
                check_lse(lse, ref_lse, 1e-3 + 2 * 2.0 ** -11 * softcap)
                print("ok  ", case)
            except AssertionError as e:
                failures += 1
                print("FAIL", case, str(e)[:160])
print(f"{failures} failed")
