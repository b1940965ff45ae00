"""The deterministic backward's bits on one library against another's (a kernel change that must not
move a visible entry's arithmetic), plus each case against the fp64 reference (tests/gpu_helpers):
hdim 64 / 128 bf16, full / causal / windows, lengths off the tiles, MHA and GQA, det and non-det.
    python bwd_cross_lib.py save OUT.pt      (with one library in dash/)
    python bwd_cross_lib.py compare A.pt B.pt
HDIMS=128 (say) restricts the cases to those head dims.
Inputs come from fixed seeds, so both runs see the same tensors. Non-det results are compared with
the reference only (their adds are unordered)."""
import os
import pathlib
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "tests"))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3]))
import dash  # noqa: E402
from gpu_helpers import check_against_reference, make_inputs  # noqa: E402

CASES = []
HDIMS = [int(h) for h in os.environ.get("HDIMS", "64,128").split(",")]  # e.g. HDIMS=128 for a library of those units
for hd in HDIMS:
    for sq, sk in ((113, 113), (1000, 1000), (2048, 2048), (4097, 4097), (113, 203), (203, 113), (1, 300),
                   (1000, 2048), (2048, 1000)):
        for causal in (False, True):
            CASES.append((hd, sq, sk, causal, (-1, -1), None))
    for window in ((100, 0), (37, 50), (0, 0), (300, 300)):
        CASES.append((hd, 1000, 1000, False, window, None))
        CASES.append((hd, 2048, 1000, False, window, None))
    CASES.append((hd, 4097, 4097, True, (-1, -1), 2))   # GQA 8 / 2
    CASES.append((hd, 2048, 2048, False, (-1, -1), 2))


def run(case, deterministic):
    hd, sq, sk, causal, window, heads_kv = case
    heads = 8 if heads_kv else 3
    inputs = make_inputs(2, sq, sk, heads, hd, torch.bfloat16, causal, seed=sq * 7919 + sk + hd, heads_kv=heads_kv)
    if window != (-1, -1):  # the reference forward with the window
        from dash import reference
        inputs["out"], inputs["softmax_lse"] = reference.attention_forward(
            inputs["q"], inputs["k"], inputs["v"], causal=causal, window_size=window, compute_dtype=torch.float32)
    grads = dash.attn_bwd(inputs["dout"], inputs["q"], inputs["k"], inputs["v"], inputs["out"], inputs["softmax_lse"],
                          causal=causal, deterministic=deterministic, window_size=window)
    return inputs, grads


if sys.argv[1] == "save":
    saved, failures = {}, 0
    for case in CASES:
        for det in (True, False):
            inputs, grads = run(case, det)
            hd, sq, sk, causal, window, heads_kv = case
            try:
                if window == (-1, -1):
                    check_against_reference(inputs, causal, grads, torch.bfloat16)
                else:
                    from dash import reference
                    ref = reference.attention_backward(inputs["dout"], inputs["q"], inputs["k"], inputs["v"], causal=causal,
                                                       window_size=window, compute_dtype=torch.float64)
                    for name, ours, r in zip("dq dk dv".split(), grads, ref):
                        assert not torch.isnan(ours).any(), name
                        err = (ours.double() - r.double()).abs().max().item()
                        assert err < 0.05 * max(1.0, r.abs().max().item()), (name, err)
            except AssertionError as e:
                failures += 1
                print("REFERENCE FAIL", case, det, e)
            if det:
                again = run(case, det)[1]
                assert all(torch.equal(a, b) for a, b in zip(grads, again)), ("not repeatable", case)
                saved[case] = [g.cpu() for g in grads]
    torch.save(saved, sys.argv[2])
    print(f"saved {len(saved)} det cases, {2 * len(CASES)} runs checked against the reference, {failures} failures")
else:
    a, b = torch.load(sys.argv[2]), torch.load(sys.argv[3])
    same = sum(all(torch.equal(x, y) for x, y in zip(a[c], b[c])) for c in a)
    for c in a:
        if not all(torch.equal(x, y) for x, y in zip(a[c], b[c])):
            print("DIFFERS", c, [(x != y).sum().item() for x, y in zip(a[c], b[c])])
    print(f"bitwise equal across libraries: {same} / {len(a)} det cases")
