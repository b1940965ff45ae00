"""Session 48: diagonal's tail length on the GPU. The deterministic causal backward (hdim 128, bf16; and the non-deterministic one's in diagonal order, whose tail never waits) with the
tail capped at T items (DASH_TEST_TAIL_ITEMS=T, read by the op on every call; 0: item order; "rule": schedule.h's
tail_items), each T timed in the steady state back to back in one process (1 s untimed, >= 30 calls and 0.5 s
timed, median), the T's in one order in round 1 and reversed in round 2. After each timing one call with
DASH_TEST_KEEP_TASK_COUNTER=1 reads how the tail was dealt (2: longest first)."""
import os
import sys

import torch

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "..")
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "bench"))
import dash  # noqa: E402
from bench_bwd import time_ms, run_queued  # noqa: E402
from dash.reference import attention_flops  # noqa: E402

CAPS = ["rule", 112, 96, 80, 64, 48, 0]
SHAPES = [(1, 16, 16, 16384, 1), (2, 16, 16, 8192, 1), (4, 16, 16, 4096, 1), (1, 8, 8, 16384, 1), (1, 4, 4, 16384, 1),
          (1, 2, 2, 16384, 1), (1, 8, 2, 16384, 1), (1, 16, 16, 16384, 0), (2, 16, 16, 8192, 0),
          (1, 16, 16, 32768, 1)]  # last: 1 det, 0 non-det
if len(sys.argv) > 1:
    SHAPES = [tuple(int(x) for x in s.split(",")) for s in sys.argv[1:]]


def set_cap(cap):
    if cap == "rule":
        os.environ.pop("DASH_TEST_TAIL_ITEMS", None)
    else:
        os.environ["DASH_TEST_TAIL_ITEMS"] = str(cap)


results = {}
for batch, heads, heads_kv, seqlen, det in SHAPES:
    torch.manual_seed(0)
    q, do = (torch.randn(batch, seqlen, heads, 128, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    k, v = (torch.randn(batch, seqlen, heads_kv, 128, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    out, lse = dash.attn_fwd(q, k, v, causal=True)[:2]
    plan = dash.attn_bwd_plan(q, k, True, bool(det), schedule="diagonal")
    flops = attention_flops(batch, heads, seqlen, seqlen, 128, True, True)

    def call():
        dash.attn_bwd(do, q, k, v, out, lse, causal=True, deterministic=bool(det), schedule="diagonal")

    run_queued(call, 2.0, 0)  # settle
    key = f"{'det' if det else 'non-det'} b{batch} h{heads}/{heads_kv} s{seqlen}"
    for rnd, caps in ((1, CAPS), (2, CAPS[::-1])):
        for cap in caps:
            set_cap(cap)
            ms = time_ms(call, 30, 1.0, 0.5)
            os.environ["DASH_TEST_KEEP_TASK_COUNTER"] = "1"
            call()
            torch.cuda.synchronize()
            words = torch.ops.dash._last_bwd_task_counter().tolist()
            os.environ.pop("DASH_TEST_KEEP_TASK_COUNTER")
            results.setdefault(key, {}).setdefault(cap, []).append(flops / ms / 1e9)
            print(f"{key} grid {plan['grid']} {plan['schedule']} round {rnd} cap {cap}: {flops / ms / 1e9:.1f} "
                  f"TFLOPS, counter {words}", flush=True)
    set_cap("rule")
print("\nmean of two rounds, TFLOPS (change against the rule)")
print("shape".ljust(30) + "".join(str(c).rjust(15) for c in CAPS))
for key, row in results.items():
    base = sum(row["rule"]) / 2
    cells = [f"{sum(row[c]) / 2:.1f} ({100 * (sum(row[c]) / 2 / base - 1):+.1f})" for c in CAPS]
    print(key.ljust(30) + "".join(c.rjust(15) for c in cells))
