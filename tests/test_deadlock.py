"""GPU: the deterministic backward cannot hang next to other work. Another stream keeps
40 SMs fully busy while we launch: with no margin the cooperative launch waits for room,
with a 40-SM margin it runs beside the other kernel. Either way it finishes (the
semaphore watchdog would turn a hang into an error) and gives bitwise the gradients of
an undisturbed run on the same grid. Every schedule the planner deals, under full, causal
and sliding-window masks (diagonal on fixed-length calls: causal requested, windows auto)."""
import time

import pytest
import torch

from dash import reference
from conftest import requires_hopper
from gpu_helpers import make_inputs, run_dash

pytestmark = requires_hopper

NO_WINDOW = (-1, -1)


@pytest.mark.parametrize("causal,window,schedule", [
    (False, NO_WINDOW, "shift"), (False, NO_WINDOW, "ascending"), (True, NO_WINDOW, "symmetric_shift"),
    (True, NO_WINDOW, "descending"), (True, NO_WINDOW, "fa3_baseline"), (True, NO_WINDOW, "diagonal"),
    (False, (512, 0), "auto"), (False, (300, 300), "descending")])
@pytest.mark.parametrize("sm_margin", [0, 40])
def test_finishes_beside_a_long_kernel(monkeypatch, causal, window, schedule, sm_margin):
    monkeypatch.setenv("DASH_WATCHDOG_MS", "20000")
    inputs = make_inputs(2, 4096, 4096, 16, 128, torch.bfloat16, causal, seed=12)
    mask = {}
    if window != NO_WINDOW:  # the forward's out and LSE under the window
        mask = dict(window_size=window)
        inputs["out"], inputs["softmax_lse"] = reference.attention_forward(
            inputs["q"], inputs["k"], inputs["v"], causal=causal, compute_dtype=torch.float32, window_size=window)
    undisturbed = run_dash(inputs, causal, deterministic=True, schedule=schedule, sm_margin=sm_margin, **mask)
    torch.cuda.synchronize()

    busy = torch.cuda.Stream()
    with torch.cuda.stream(busy):
        torch.ops.dash._occupy_sms(40, 300)
    start = time.monotonic()
    disturbed = run_dash(inputs, causal, deterministic=True, schedule=schedule, sm_margin=sm_margin, **mask)
    torch.cuda.synchronize()
    elapsed = time.monotonic() - start
    assert elapsed < 20, f"took {elapsed:.1f} s"
    for name, a, b in zip(("dq", "dk", "dv"), undisturbed, disturbed):
        assert torch.equal(a, b), f"{name} differs from the undisturbed run"
