"""Session 47: how often does diagonal's tail get dealt longest first? Runs the deterministic
causal backward (hdim 128, bf16) on shapes with 256-2048 items and reads the task counter's
third word after each call (DASH_TEST_KEEP_TASK_COUNTER=1, torch.ops.dash._last_bwd_task_counter:
0 no tail, 1 item order, 2 longest first). Libraries without that op say so."""
import os
import sys
from collections import Counter

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", ".."))
import dash  # noqa: E402

os.environ["DASH_TEST_KEEP_TASK_COUNTER"] = "1"
if not hasattr(torch.ops.dash, "_last_bwd_task_counter"):
    sys.exit("this library has no _last_bwd_task_counter op")
for batch, heads, heads_kv, seqlen in [(1, 2, 2, 16384), (2, 2, 2, 8192), (1, 4, 4, 16384), (1, 8, 2, 16384),
                                       (1, 8, 8, 16384), (1, 16, 16, 16384), (2, 32, 8, 8192), (1, 2, 2, 4096)]:
    q, do = (torch.randn(batch, seqlen, heads, 128, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    k, v = (torch.randn(batch, seqlen, heads_kv, 128, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    out, lse = dash.attn_fwd(q, k, v, causal=True)[:2]
    plan = dash.attn_bwd_plan(q, k, True, True)
    seen = Counter()
    words = None
    for _ in range(40):
        dash.attn_bwd(do, q, k, v, out, lse, causal=True, deterministic=True)
        words = torch.ops.dash._last_bwd_task_counter().tolist()
        seen[words[2]] += 1
    print(f"b{batch} h{heads}/{heads_kv} s{seqlen}: {plan['schedule']} grid {plan['grid']} "
          f"dealing {dict(sorted(seen.items()))} (last words {words})", flush=True)
