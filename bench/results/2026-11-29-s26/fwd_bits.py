"""Forward outputs of the library in dash/ on fixed inputs, saved (first run) or compared bit for bit
(second run) -- for two builds whose softmax should give the same bits.
    python fwd_bits.py save FILE | python fwd_bits.py compare FILE"""
import pathlib
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3]))
from dash import ops  # noqa: E402

CASES = [(128, True, 1000, 0.0), (128, False, 3001, 0.0), (128, True, 4096, 0.0), (128, True, 2049, 30.0),
         (64, True, 3001, 0.0), (64, True, 1500, 0.0), (64, True, 4096, 30.0)]
results = []
for hd, causal, s, softcap in CASES:
    g = torch.Generator(device="cuda").manual_seed(hd * 100003 + s)
    q, k, v = (torch.randn(2, s, 4, hd, device="cuda", dtype=torch.bfloat16, generator=g) for _ in range(3))
    out, lse = ops.attn_fwd(q, k, v, causal=causal, softcap=softcap)
    results.append((out.cpu(), lse.cpu()))
mode, path = sys.argv[1], sys.argv[2]
if mode == "save":
    torch.save(results, path)
    print(f"saved {len(results)} cases")
else:
    ref = torch.load(path)
    for case, (o, l), (ro, rl) in zip(CASES, results, ref):
        print(case, "out equal", torch.equal(o, ro), "lse equal", torch.equal(l, rl),
              "max |d out|", (o.float() - ro.float()).abs().max().item())
