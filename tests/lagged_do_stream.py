"""Child process of tests/test_deadlock.py::test_tasks_without_steps_beside_a_late_do_stream:
runs one counter-dealt deterministic backward with tasks that have no steps (KV tiles no
query sees), first normally, then `repeats` times with the dO producer warp held back
before each task (DASH_TEST_DO_LAG_NS), and exits 0 if every lagged run gives the normal
run's bits. A stall shows as the parent's timeout.

  python tests/lagged_do_stream.py CASE LAG_NS REPEATS"""
import os
import sys

import torch

import dash
from band_helpers import make_qkv, make_varlen
from dash import reference

# (KV tiles whose keys no query sees; items per CTA on a 132-SM H200)
CASES = {
    # packed: empty and one-row documents beside long ones, window (0, 0) leaving most KV tiles
    # unseen; a few dozen items, one per CTA
    "packed_small": dict(lengths_q=[200, 0, 1, 777, 128], lengths_k=[500, 3, 0, 640, 1], window=(0, 0)),
    # packed: 48 documents, two of three without queries, several items per CTA
    "packed_many": dict(lengths_q=[0, 0, 300] * 16, lengths_k=[700, 513, 900] * 16, window=(-1, -1)),
    # fixed length, diagonal from the counter: keys 0..749 of each sequence seen by no query
    "window": dict(batch=2, seqlen_q=200, seqlen_k=1000, window=(50, -1)),
    # fixed length, many items: 8 x 16 sequences x heads of which most KV tiles are unseen
    "window_many": dict(batch=16, seqlen_q=130, seqlen_k=2048, window=(10, 0)),
}


def run(case):
    c = CASES[case]
    if "lengths_q" in c:
        x = make_varlen(c["lengths_q"], c["lengths_k"], 4, 2, 128, torch.bfloat16, seed=3)
        out, lse = reference.attention_varlen_forward(x["q"], x["k"], x["v"], x["cu_q"], x["cu_k"],
                                                      window_size=c["window"])
        return dash.attn_varlen_bwd(x["dout"], x["q"], x["k"], x["v"], out, lse, x["cu_q"], x["cu_k"], x["max_q"],
                                    x["max_k"], deterministic=True, window_size=c["window"])
    q, k, v, dout = make_qkv(c["batch"], c["seqlen_q"], c["seqlen_k"], 4, 128, torch.bfloat16, heads_kv=2, seed=3)
    out, lse = reference.attention_forward(q, k, v, compute_dtype=torch.float32, window_size=c["window"])
    return dash.attn_bwd(dout, q, k, v, out, lse, deterministic=True, window_size=c["window"])


def main(case, lag_ns, repeats):
    os.environ["DASH_TEST_DO_LAG_NS"] = "0"
    normal = run(case)
    torch.cuda.synchronize()
    os.environ["DASH_TEST_DO_LAG_NS"] = str(lag_ns)
    for i in range(repeats):
        lagged = run(case)
        torch.cuda.synchronize()
        for name, a, b in zip(("dq", "dk", "dv"), normal, lagged):
            if not torch.equal(a, b):
                print(f"{case}: {name} of lagged run {i} differs from the normal run")
                return 1
    print(f"{case}: {repeats} lagged runs, same bits")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
