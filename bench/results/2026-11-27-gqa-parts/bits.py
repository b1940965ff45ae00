"""Dumps dash's backward outputs for split query-head groups (kv_parts > 1) on fixed inputs, so
two libraries' bits can be compared: python bits.py OUT.pt [--compare A.pt B.pt]."""
import os
import sys

import torch

sys.path.insert(0, os.getcwd())
import dash  # noqa: E402

CASES = [  # batch, heads, heads_kv, seqlen, head_dim, causal, forced parts (None: the plan's)
    (4, 32, 8, 4096, 128, True, None),
    (1, 32, 8, 16384, 128, False, None),
    (2, 16, 2, 1531, 128, True, None),
    (2, 16, 1, 2048, 64, True, None),
    (2, 8, 2, 777, 64, False, 2),
    (1, 16, 4, 3001, 128, True, 4),
]


def run(path):
    results = {}
    for case in CASES:
        batch, heads, heads_kv, seqlen, hdim, causal, parts = case
        if parts:
            os.environ["DASH_KV_PARTS"] = str(parts)
        else:
            os.environ.pop("DASH_KV_PARTS", None)
        gen = torch.Generator(device="cuda").manual_seed(seqlen)
        rand = lambda h: torch.randn(batch, seqlen, h, hdim, device="cuda", dtype=torch.bfloat16, generator=gen)  # noqa: E731
        q, k, v, dout = rand(heads), rand(heads_kv), rand(heads_kv), rand(heads)
        out, lse = dash.attn_fwd(q, k, v, causal=causal)
        for det in (True, False):
            plan = dash.attn_bwd_plan(q, k, causal, det)
            grads = dash.attn_bwd(dout, q, k, v, out, lse, causal=causal, deterministic=det)
            results[(case, det)] = (plan["kv_parts"], [g.cpu() for g in grads])
            print(case, det, "kv_parts", plan["kv_parts"])
    torch.save(results, path)


def compare(a, b):
    ra, rb = torch.load(a), torch.load(b)
    bad = 0
    for key in ra:
        pa, ga = ra[key]
        pb, gb = rb[key]
        same = [torch.equal(x, y) for x, y in zip(ga, gb)]
        print(key, "parts", pa, pb, "equal dq/dk/dv", same)
        bad += (pa > 1) and not all(same)
    print("MISMATCHES (split groups):", bad)


if __name__ == "__main__":
    if sys.argv[1] == "--compare":
        compare(sys.argv[2], sys.argv[3])
    else:
        run(sys.argv[1])
