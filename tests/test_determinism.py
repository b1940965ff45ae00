"""GPU: deterministic mode is bitwise reproducible, and the ordered path really runs:
the kernel's recorded accumulation order matches the schedule model exactly."""
import pytest
import torch

import dash
from dash.schedule import BwdScheduleView, dq_accumulation_orders
from conftest import requires_hopper
from gpu_helpers import make_inputs, run_dash

pytestmark = requires_hopper

REPEATS = 50

# (batch, heads, seqlen_q, seqlen_k, head_dim, causal): many Q and KV tiles, more tasks
# than SMs (several waves of the persistent grid), odd lengths.
SHAPES = [
    (2, 8, 2048, 2048, 128, False),
    (2, 8, 2048, 2048, 128, True),
    (1, 16, 4097, 4097, 64, True),
    (4, 6, 1000, 1531, 64, False),
    (3, 5, 1531, 1000, 128, True),
]


@pytest.mark.parametrize("batch,heads,seqlen_q,seqlen_k,head_dim,causal", SHAPES)
def test_bitwise_reproducible(batch, heads, seqlen_q, seqlen_k, head_dim, causal):
    inputs = make_inputs(batch, seqlen_q, seqlen_k, heads, head_dim, torch.bfloat16, causal, seed=3)
    first = run_dash(inputs, causal, deterministic=True)
    for i in range(REPEATS - 1):
        again = run_dash(inputs, causal, deterministic=True)
        for name, a, b in zip(("dq", "dk", "dv"), first, again):
            assert torch.equal(a, b), f"{name} differs from the first run at repeat {i + 1}"


def _trace(inputs, causal, deterministic):
    b, sq, h, d = inputs["q"].shape
    sk = inputs["k"].shape[1]
    trace, count = dash.trace_buffers(b, h, sq, sk, d, device="cuda")
    grads = run_dash(inputs, causal, deterministic=deterministic, dq_trace=trace, dq_trace_count=count)
    return grads, trace.cpu(), count.cpu()


@pytest.mark.parametrize("batch,heads,seqlen_q,seqlen_k,head_dim,causal", SHAPES + [
    (1, 3, 300, 1000, 128, True), (2, 2, 1000, 300, 64, True), (1, 1, 1, 4097, 128, False)])
def test_recorded_order_matches_schedule(batch, heads, seqlen_q, seqlen_k, head_dim, causal):
    inputs = make_inputs(batch, seqlen_q, seqlen_k, heads, head_dim, torch.bfloat16, causal, seed=4)
    _, trace, count = _trace(inputs, causal, deterministic=True)
    block_m, block_n = dash.bwd_tile_shape(head_dim)
    view = BwdScheduleView.for_problem(batch, heads, seqlen_q, seqlen_k, block_m, block_n, causal)
    expected = dq_accumulation_orders(view)
    for bb in range(batch):
        for hh in range(heads):
            for m in range(view.num_m_blocks):
                want = expected.get((bb, hh, m), [])
                got = trace[bb, hh, m, : count[bb, hh, m]].tolist()
                assert count[bb, hh, m] == len(want), f"tile {(bb, hh, m)}: {count[bb, hh, m]} partials, want {len(want)}"
                assert got == want, f"tile {(bb, hh, m)}: order {got}, schedule says {want}"


def test_trace_does_not_change_results():
    inputs = make_inputs(2, 1000, 1000, 4, 128, torch.bfloat16, True, seed=6)
    plain = run_dash(inputs, True, deterministic=True)
    traced, _, _ = _trace(inputs, True, deterministic=True)
    for a, b in zip(plain, traced):
        assert torch.equal(a, b)


def test_nondeterministic_mode_sees_every_partial():
    """Unordered mode adds the same set of partials (in whatever order they arrive)."""
    inputs = make_inputs(2, 2048, 2048, 8, 128, torch.bfloat16, False, seed=7)
    _, trace, count = _trace(inputs, False, deterministic=False)
    block_m, block_n = dash.bwd_tile_shape(128)
    view = BwdScheduleView.for_problem(2, 8, 2048, 2048, block_m, block_n, False)
    expected = dq_accumulation_orders(view)
    for (bb, hh, m), want in expected.items():
        got = sorted(trace[bb, hh, m, : count[bb, hh, m]].tolist())
        assert got == sorted(want)
