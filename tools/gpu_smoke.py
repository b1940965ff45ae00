"""Quick diagnostic on a GPU: for a few shapes, print each gradient's error against the
fp64 reference (relative to the error of a plain bf16 PyTorch computation), NaN counts and
whether deterministic runs repeat bitwise. Prints as it goes, so a hang shows where."""
import sys
import pathlib
import time

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests"))
import dash  # noqa: E402
from dash import reference  # noqa: E402
from gpu_helpers import make_inputs, run_dash  # noqa: E402

CASES = [  # batch, sq, sk, heads, hdim, causal
    (1, 128, 128, 1, 128, False), (1, 64, 128, 1, 128, False), (2, 300, 300, 2, 128, False),
    (2, 300, 300, 2, 128, True), (1, 1000, 1000, 2, 64, False), (1, 1000, 1000, 2, 64, True),
    (1, 113, 203, 2, 128, True), (1, 203, 113, 2, 64, True), (2, 2048, 2048, 4, 128, True),
]


def main():
    for batch, sq, sk, heads, hdim, causal in CASES:
        for det in (False, True):
            inputs = make_inputs(batch, sq, sk, heads, hdim, torch.bfloat16, causal, seed=1)
            t0 = time.time()
            grads = run_dash(inputs, causal, deterministic=det)
            torch.cuda.synchronize()
            dt = time.time() - t0
            ref = reference.attention_backward(inputs["dout"], inputs["q"], inputs["k"], inputs["v"], causal=causal)
            pt = reference.attention_backward(inputs["dout"], inputs["q"], inputs["k"], inputs["v"], causal=causal,
                                              compute_dtype=torch.bfloat16)
            parts = []
            for name, g, r, p in zip(("dq", "dk", "dv"), grads, ref, pt):
                err = (g.double() - r).abs().max().item()
                perr = (p.double() - r).abs().max().item()
                parts.append(f"{name} err {err:.2e} (pt {perr:.2e}) nan {int(torch.isnan(g).sum())}")
            same = ""
            if det:
                again = run_dash(inputs, causal, deterministic=True)
                same = " repeat-equal " + str(all(torch.equal(a, b) for a, b in zip(grads, again)))
            print(f"b{batch} sq{sq} sk{sk} h{heads} d{hdim} {'causal' if causal else 'full'} det={det} "
                  f"{dt*1e3:.0f}ms | " + " | ".join(parts) + same, flush=True)


if __name__ == "__main__":
    main()
