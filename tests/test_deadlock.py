"""GPU: the deterministic backward cannot hang next to other work. Another stream keeps
40 SMs fully busy while we launch: with no margin a statically dealt schedule's cooperative
launch waits for room, a counter-dealt one (ascending on full masks, diagonal) starts on the
SMs that are free and its other CTAs join later; with a 40-SM margin either runs beside the
other kernel. Either way it finishes (the
semaphore watchdog would turn a hang into an error) and gives bitwise the gradients of
an undisturbed run on the same grid. Every schedule the planner deals, under full, causal
and sliding-window masks (diagonal on fixed-length calls: causal requested, windows auto)."""
import os
import pathlib
import subprocess
import sys
import time

import pytest
import torch

import dash
from dash import reference
from dash.schedule import counter_dealt_schedule
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
    planned = dash.attn_bwd_plan(inputs["q"], inputs["k"], causal, True, schedule, sm_margin=sm_margin, **mask)
    counter_dealt = counter_dealt_schedule(planned["schedule"], packed=False)

    busy = torch.cuda.Stream()
    with torch.cuda.stream(busy):
        torch.ops.dash._occupy_sms(40, 300)
    start = time.monotonic()
    disturbed = run_dash(inputs, causal, deterministic=True, schedule=schedule, sm_margin=sm_margin, **mask)
    torch.cuda.current_stream().synchronize()  # this call's stream only: the other kernel may still run
    elapsed = time.monotonic() - start
    torch.cuda.synchronize()
    assert elapsed < 20, f"took {elapsed:.1f} s"
    if counter_dealt:  # not a cooperative launch: it runs on the free SMs, not after the 300 ms kernel
        assert elapsed < 0.2, f"{planned['schedule']} waited {elapsed * 1e3:.0f} ms for the other kernel"
    for name, a, b in zip(("dq", "dk", "dv"), undisturbed, disturbed):
        assert torch.equal(a, b), f"{name} differs from the undisturbed run"


@pytest.mark.parametrize("head_dim,head_dim_v", [(192, 192), (192, 128), (256, 256)])
@pytest.mark.parametrize("causal,schedule", [(False, "ascending"), (True, "diagonal"), (True, "descending")])
def test_shared_buffer_writers_finish_on_any_grid(monkeypatch, head_dim, head_dim_v, causal, schedule):
    """Past head dim 128 the deterministic mode's two dQ writers take alternate steps of the one
    staging buffer (bwd/dq_writer.h: turn barriers, a closing record each). Beside a long kernel
    (40 SMs busy, no margin) and on a one-CTA grid it still finishes (the watchdog would turn a
    hang into an error), bitwise the undisturbed full grid's gradients."""
    monkeypatch.setenv("DASH_WATCHDOG_MS", "20000")
    inputs = make_inputs(2, 1537, 1537, 6, head_dim, torch.bfloat16, causal, seed=13, head_dim_v=head_dim_v)
    undisturbed = run_dash(inputs, causal, deterministic=True, schedule=schedule)
    torch.cuda.synchronize()
    busy = torch.cuda.Stream()
    with torch.cuda.stream(busy):
        torch.ops.dash._occupy_sms(40, 300)
    start = time.monotonic()
    disturbed = run_dash(inputs, causal, deterministic=True, schedule=schedule)
    torch.cuda.synchronize()
    one_cta = run_dash(inputs, causal, deterministic=True, schedule=schedule,
                       sm_margin=torch.cuda.get_device_properties(0).multi_processor_count - 1)
    torch.cuda.synchronize()
    elapsed = time.monotonic() - start
    assert elapsed < 20, f"took {elapsed:.1f} s"
    for grads in (disturbed, one_cta):
        for name, a, b in zip(("dq", "dk", "dv"), undisturbed, grads):
            assert torch.equal(a, b), f"{name} differs from the undisturbed full-grid run"


@pytest.mark.parametrize("case", ["packed_small", "packed_many", "window", "window_many"])
def test_tasks_without_steps_beside_a_late_do_stream(case):
    """Counter-dealt calls (packed, and fixed-length windows on the diagonal) with tasks that
    have no steps: the MMA warpgroups free K / V without any dO load, so only the
    do_records_read flag keeps the Q producer stream from publishing the next task (or the
    last, empty one) before the dO stream has read the current record. The dO stream is held
    back 20 us before every task (DASH_TEST_DO_LAG_NS), in a child process: a stall fails the
    test by the timeout instead of hanging it; every lagged run must give the normal run's
    bits. Without the flag these calls stalled at random, rarely (a cold dO warp reaching
    kv_full after two phases had passed), and with the lag every time (checked by removing it)."""
    child = pathlib.Path(__file__).with_name("lagged_do_stream.py")
    path = [str(child.parent), str(child.parent.parent), os.environ.get("PYTHONPATH", "")]  # tests/, the repo
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(path))
    try:
        result = subprocess.run([sys.executable, str(child), case, "20000", "5"], env=env, capture_output=True,
                                text=True, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{case}: the backward with a late dO stream stalled (no result in 120 s)")
    assert result.returncode == 0, result.stdout + result.stderr
