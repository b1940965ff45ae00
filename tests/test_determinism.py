"""GPU: deterministic mode is bitwise reproducible, and the ordered path really runs:
the kernel's recorded accumulation order matches the schedule model exactly."""
import pytest
import torch

import dash
from dash.schedule import BwdScheduleView, dq_accumulation_orders
from conftest import requires_hopper
from gpu_helpers import check_against_reference, make_inputs, run_dash

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


def _trace(inputs, causal, deterministic, **kw):
    b, sq, h, d = inputs["q"].shape
    sk = inputs["k"].shape[1]
    trace, count = dash.trace_buffers(b, h, sq, sk, d, device="cuda", head_dim_v=inputs["v"].shape[-1],
                                      softcap=kw.get("softcap", 0.0))
    grads = run_dash(inputs, causal, deterministic=deterministic, dq_trace=trace, dq_trace_count=count, **kw)
    return grads, trace.cpu(), count.cpu()


def model_view(inputs, causal, schedule="auto", sm_margin=0, softcap=0.0):
    """The schedule model for what the kernel runs (schedule and grid from attn_bwd_plan;
    softcap kernels may have their own tiles)."""
    b, sq, h, d = inputs["q"].shape
    plan = dash.attn_bwd_plan(inputs["q"], inputs["k"], causal, True, schedule, sm_margin, softcap=softcap,
                              head_dim_v=inputs["v"].shape[-1])
    block_m, block_n = dash.bwd_tile_shape(d, inputs["v"].shape[-1], softcap)
    return BwdScheduleView.for_problem(b, h, sq, inputs["k"].shape[1], block_m, block_n, causal,
                                       plan["schedule"], plan["grid"], heads_kv=inputs["k"].shape[2],
                                       parts=plan["kv_parts"], chunk=plan["deal_chunk"])


TRACE_CASES = [  # shape, schedule, sm_margin
    ((2, 8, 2048, 2048, 128, False), "ascending", 0),
    ((2, 8, 2048, 2048, 128, False), "shift", 0),
    ((2, 8, 2048, 2048, 128, False), "shift", 100),   # 32-CTA grid: a head spans rounds
    ((4, 6, 1000, 1531, 64, False), "shift", 0),
    ((3, 5, 3000, 700, 64, False), "shift", 125),
    ((2, 8, 2048, 2048, 128, False), "descending", 0),
    ((2, 8, 2048, 2048, 128, True), "ascending", 0),
    ((2, 8, 2048, 2048, 128, True), "descending", 0),
    ((2, 8, 2048, 2048, 128, True), "symmetric_shift", 0),
    ((1, 16, 4097, 4097, 64, True), "auto", 0),
    ((1, 12, 4096, 4096, 128, True), "symmetric_shift", 0),
    ((1, 12, 4096, 4096, 128, True), "symmetric_shift", 110),  # 22 CTAs: heads span rounds
    ((3, 5, 1000, 1000, 64, True), "symmetric_shift", 120),
    ((3, 5, 1531, 1000, 128, True), "ascending", 117),
    ((3, 5, 1531, 1000, 128, True), "symmetric_shift", 0),     # seqlen_q != seqlen_k: falls back
    ((1, 3, 300, 1000, 128, True), "auto", 0),
    ((2, 2, 1000, 300, 64, True), "descending", 0),
    ((1, 1, 1, 4097, 128, False), "shift", 0),         # 1 Q tile: shift falls back
    ((2, 8, 2048, 2048, 128, True), "fa3_baseline", 0),
    ((3, 5, 1531, 1000, 128, True), "fa3_baseline", 117),
    ((4, 6, 1000, 1531, 64, False), "fa3_baseline", 0),
    ((2, 8, 2048, 2048, 128, False), "auto", 0),       # chunked ascending, counter-dealt
    ((2, 8, 2048, 2048, 128, False), "auto", 131),     # ... on one CTA
    ((3, 5, 1531, 1000, 64, False), "auto", 100),
    ((2, 8, 2048, 2048, 128, True), "auto", 0),        # diagonal, counter-dealt
    ((2, 8, 2048, 2048, 128, True), "auto", 125),
    ((3, 5, 1531, 1000, 128, True), "diagonal", 0),
]


SOFTCAP_TRACE_CASES = [  # shape, schedule, sm_margin: the softcap kernels' tiles (hdim 64: their own)
    ((2, 4, 1000, 1000, 64, True), "auto", 0),
    ((1, 8, 2048, 2048, 64, True), "symmetric_shift", 0),
    ((1, 8, 2048, 2048, 64, True), "symmetric_shift", 110),
    ((4, 6, 1000, 1531, 64, False), "shift", 0),
    ((2, 8, 2048, 2048, 64, False), "shift", 100),
    ((2, 8, 2048, 2048, 128, True), "auto", 0),
    ((2, 4, 2048, 2048, 256, False), "auto", 0),   # 256 issues dK^T before its dQ slices (bwd_last_gemm)
    ((2, 4, 1531, 1000, 256, True), "auto", 0),
]


@pytest.mark.parametrize("shape,schedule,sm_margin,softcap",
                         [c + (0.0,) for c in TRACE_CASES] + [c + (30.0,) for c in SOFTCAP_TRACE_CASES])
def test_recorded_order_matches_schedule(shape, schedule, sm_margin, softcap):
    batch, heads, seqlen_q, seqlen_k, head_dim, causal = shape
    inputs = make_inputs(batch, seqlen_q, seqlen_k, heads, head_dim, torch.bfloat16, causal, seed=4)
    view = model_view(inputs, causal, schedule, sm_margin, softcap)
    assert (view.block_m, view.block_n) == dash.bwd_tile_shape(head_dim, head_dim, softcap)
    _, trace, count = _trace(inputs, causal, deterministic=True, schedule=schedule, sm_margin=sm_margin,
                             **({"softcap": softcap} if softcap else {}))
    assert_trace_matches_model(view, trace, count)


def assert_trace_matches_model(view, trace, count):
    """Every dQ tile's recorded KV-tile order is the schedule model's, partial for partial."""
    expected = dq_accumulation_orders(view)
    for bb in range(view.batch):
        for hh in range(view.heads):
            for m in range(view.num_m_blocks):
                want = expected.get((bb, hh, m), [])
                got = trace[bb, hh, m, : count[bb, hh, m]].tolist()
                assert count[bb, hh, m] == len(want), f"tile {(bb, hh, m)}: {count[bb, hh, m]} partials, want {len(want)}"
                assert got == want, f"tile {(bb, hh, m)} ({view.schedule}): order {got}, schedule says {want}"


@pytest.mark.parametrize("causal,schedule", [(False, "ascending"), (False, "shift"), (True, "ascending"),
                                             (True, "descending"), (True, "symmetric_shift"),
                                             (True, "fa3_baseline")])
@pytest.mark.parametrize("head_dim", [64, 128])
def test_every_schedule_is_correct_and_reproducible(head_dim, causal, schedule):
    """Different fixed orders give different roundings, but each is correct and each
    repeats bitwise; non-deterministic mode with the same visit order is correct too."""
    inputs = make_inputs(2, 1536, 1536, 4, head_dim, torch.bfloat16, causal, seed=8)
    grads = run_dash(inputs, causal, deterministic=True, schedule=schedule)
    check_against_reference(inputs, causal, grads, torch.bfloat16)
    for _ in range(5):
        again = run_dash(inputs, causal, deterministic=True, schedule=schedule)
        assert all(torch.equal(a, b) for a, b in zip(grads, again))
    check_against_reference(inputs, causal, run_dash(inputs, causal, deterministic=False, schedule=schedule),
                            torch.bfloat16)


def test_plan_reports_fallbacks():
    q = torch.empty(1, 64, 2, 128, device="cuda", dtype=torch.bfloat16)
    k = torch.empty(1, 4096, 2, 128, device="cuda", dtype=torch.bfloat16)
    plan = dash.attn_bwd_plan(q, k, causal=False, deterministic=True, schedule="shift")
    assert plan["schedule"] == "ascending" and "Q tiles" in plan["reason"]
    plan = dash.attn_bwd_plan(k, k, causal=True, deterministic=True, schedule="shift")
    assert plan["schedule"] == "descending" and "full mask" in plan["reason"]
    plan = dash.attn_bwd_plan(q, k, causal=True, deterministic=True, schedule="symmetric_shift")
    assert plan["schedule"] == "descending" and "seqlen_q == seqlen_k" in plan["reason"]
    # auto, deterministic: the grid-invariant orders (diagonal on bands, ascending on full masks)
    plan = dash.attn_bwd_plan(k, k, causal=True, deterministic=True)
    assert plan["schedule"] == "diagonal" and "any grid" in plan["reason"] and plan["deal_chunk"] == 1
    plan = dash.attn_bwd_plan(k, k, causal=False, deterministic=True)
    assert plan["schedule"] == "ascending" and "any grid" in plan["reason"] and plan["deal_chunk"] >= 1
    assert plan["grid"] == min(64, plan["sm_count"])
    # the faster grid-dependent schedules are an explicit opt-in
    plan = dash.attn_bwd_plan(k, k, causal=True, deterministic=True, schedule="symmetric_shift")
    assert plan["schedule"] == "symmetric_shift" and plan["grid"] == min(32, plan["sm_count"])
    odd = torch.empty(1, 4096 + 128, 2, 128, device="cuda", dtype=torch.bfloat16)  # 33 KV tiles
    plan = dash.attn_bwd_plan(odd, odd, causal=True, deterministic=True, schedule="symmetric_shift")
    assert plan["schedule"] == "descending" and "even number" in plan["reason"]
    plan = dash.attn_bwd_plan(k, k, causal=False, deterministic=True, schedule="shift")
    assert plan["schedule"] == "shift" and plan["grid"] == min(64, plan["sm_count"])
    plan = dash.attn_bwd_plan(k, k, causal=False, deterministic=True, schedule="shift", sm_margin=10)
    assert plan["grid"] == min(64, plan["sm_count"] - 10)
    # not deterministic: auto keeps the fastest schedule: shift on full masks; on causal ones
    # ascending, the longest tasks first from a counter in L2-sized sections of walks, where a
    # section holds a grid's worth of items (whether symmetric shift applies or not), else
    # symmetric shift where it applies, else diagonal; diagonal on sliding windows
    assert dash.attn_bwd_plan(k, k, causal=False, deterministic=False)["schedule"] == "shift"
    many = torch.empty(1, 4096, 16, 128, device="cuda", dtype=torch.bfloat16)  # 16 walks of 32 KV tiles
    odd_many = torch.empty(1, 4096 + 128, 16, 128, device="cuda", dtype=torch.bfloat16)
    wide = torch.empty(1, 8192, 16, 192, device="cuda", dtype=torch.bfloat16)  # 64 x 96 tiles: 86 KV tiles
    for t in (many, odd_many, wide):
        plan = dash.attn_bwd_plan(t, t, causal=True, deterministic=False)
        assert plan["schedule"] == "ascending" and "sections" in plan["reason"], plan
    # 4096 rows of Q, dO (bf16) and dQ accumulator (fp32) at hdim 128: 4 MB a walk -> 8 walks a
    # section, 256 items
    assert dash.attn_bwd_plan(many, many, causal=True, deterministic=False)["deal_chunk"] == 8
    # k: 2 walks of 32 KV tiles, 64 items: fewer than the grid
    plan = dash.attn_bwd_plan(k, k, causal=True, deterministic=False)
    assert plan["schedule"] == "symmetric_shift" and "fewer items than the grid" in plan["reason"]
    plan = dash.attn_bwd_plan(odd, odd, causal=True, deterministic=False)
    assert plan["schedule"] == "diagonal" and "even number" in plan["reason"]
    plan = dash.attn_bwd_plan(q, k, causal=True, deterministic=False)
    assert plan["schedule"] == "diagonal" and "seqlen_q == seqlen_k" in plan["reason"]
    plan = dash.attn_bwd_plan(many, many, causal=True, deterministic=False, window_size=(256, 0))
    assert plan["schedule"] == "diagonal"
    plan = dash.attn_bwd_plan(k, k, causal=True, deterministic=True, schedule="fa3_baseline")
    assert plan["schedule"] == "fa3_baseline" and plan["reason"] == "requested"
    with pytest.raises(ValueError, match="unknown schedule"):
        dash.attn_bwd_plan(k, k, schedule="zigzag")
    with pytest.raises(ValueError, match="sm_margin"):
        dash.attn_bwd_plan(k, k, sm_margin=100000)


def test_trace_does_not_change_results():
    inputs = make_inputs(2, 1000, 1000, 4, 128, torch.bfloat16, True, seed=6)
    plain = run_dash(inputs, True, deterministic=True)
    traced, _, _ = _trace(inputs, True, deterministic=True)
    for a, b in zip(plain, traced):
        assert torch.equal(a, b)


@pytest.mark.parametrize("shape,window,sm_margin,tail_items", [
    ((2, 8, 2048, 2048, 128, True), None, 0, None),
    ((2, 8, 2048, 2048, 128, True), None, 0, "5"),    # DASH_TEST_TAIL_ITEMS: a 5-item tail
    ((2, 8, 2048, 2048, 128, True), None, 125, None),  # 7 CTAs: a 6-item tail
    ((1, 8, 3001, 3001, 128, True), (700, 0), 0, None),
    ((1, 3, 4097, 4097, 128, True), None, 82, None),   # 50 CTAs, 99 items: a 49-item tail over two heads
    ((1, 16, 4097, 4097, 64, True), None, 0, None),    # item order ("bwd_tail" of hdim 64's pair)
    ((1, 4, 4097, 4097, 96, True), None, 82, None),    # 50 CTAs, 132 items: a tail of 25 (the cap)
    ((1, 2, 4097, 4097, 192, True), None, 82, None),   # 64 x 96 tiles: 86 items, a tail of 26 (the cap)
], ids=["128", "128-tail5", "128-7ctas", "128-window", "128-50ctas", "64", "96-50ctas", "192-50ctas"])
def test_diagonal_tail_dealt_longest_first_keeps_the_bits(shape, window, sm_margin, tail_items, monkeypatch):
    """Diagonal's last items dealt longest first (schedule.h tail_items; the pairs whose
    "bwd_tail" asks it: hdim 96, 128, 192) change only who runs them when: the same bits and the same
    recorded dQ order as every item dealt in item order (DASH_TEST_ITEM_ORDER_TAIL=1), and the
    order the model gives. The task counter's third word (torch.ops.dash._last_bwd_task_counter)
    shows which dealing each call ran: 2 (longest first) in at least one of ten calls where the
    pair deals so, never where it does not."""
    batch, heads, seqlen_q, seqlen_k, head_dim, causal = shape
    inputs = make_inputs(batch, seqlen_q, seqlen_k, heads, head_dim, torch.bfloat16, causal, seed=21)
    kw = dict(sm_margin=sm_margin, window_size=window) if window else dict(sm_margin=sm_margin)
    monkeypatch.setenv("DASH_TEST_KEEP_TASK_COUNTER", "1")
    if tail_items is not None:
        monkeypatch.setenv("DASH_TEST_TAIL_ITEMS", tail_items)

    def dealing():  # [items drawn, CTAs started, tail dealing (0 none, 1 item order, 2 longest first)]
        return torch.ops.dash._last_bwd_task_counter().tolist()

    tail, trace, count = _trace(inputs, causal, deterministic=True, **kw)
    dealt = [dealing()]
    for _ in range(9):
        again = run_dash(inputs, causal, deterministic=True, **kw)
        dealt.append(dealing())
        assert all(torch.equal(a, b) for a, b in zip(tail, again))
    monkeypatch.setenv("DASH_TEST_ITEM_ORDER_TAIL", "1")
    in_order, trace_in_order, count_in_order = _trace(inputs, causal, deterministic=True, **kw)
    assert dealing()[2] == 0  # the switch: no tail
    for name, a, b in zip(("dq", "dk", "dv"), tail, in_order):
        assert torch.equal(a, b), f"{name}: the tail's dealing changed the bits"
    assert torch.equal(count, count_in_order) and torch.equal(trace, trace_in_order)
    longest_first = (head_dim, head_dim) in dash._traits.BWD_TAIL_LONGEST_FIRST
    if longest_first:
        assert all(d[2] in (1, 2) for d in dealt) and any(d[2] == 2 for d in dealt), dealt
    else:
        assert all(d[1] == 0 and d[2] == 0 for d in dealt), dealt  # the tail's code is compiled out
    if window is None:
        view = model_view(inputs, causal, sm_margin=sm_margin)
        assert view.schedule == "diagonal" and view.tail_items() > 0
        assert all(d[0] >= view.num_items() for d in dealt)
        for (bb, hh, m), want in dq_accumulation_orders(view).items():
            assert trace[bb, hh, m, : count[bb, hh, m]].tolist() == want


def test_nondeterministic_mode_adds_every_partial_once():
    """Unordered mode adds the same set of partials (in whatever order they arrive)."""
    inputs = make_inputs(2, 2048, 2048, 8, 128, torch.bfloat16, False, seed=7)
    view = model_view(inputs, False)
    _, trace, count = _trace(inputs, False, deterministic=False)
    for (bb, hh, m), want in dq_accumulation_orders(view).items():
        got = sorted(trace[bb, hh, m, : count[bb, hh, m]].tolist())
        assert got == sorted(want)
