"""GPU: GQA / MQA (k and v with fewer heads than q), forward and backward.

Against an fp64 reference (dk, dv summed over each K/V head's query group) for groups 1,
2, 4, 8 and MQA, both masks, dtypes and head dims, odd lengths, outputs poisoned; the
deterministic backward repeats bitwise 50 times and its recorded dQ order is the schedule
model's (a task walks its K/V head's whole query group, so dK / dV have no cross-CTA
order to record); and grids of more than 65535 heads run."""
import pytest
import torch

import dash
from dash import reference
from conftest import requires_hopper
from gpu_helpers import assert_close_fa_style, check_against_reference, make_inputs, poison_allocator, run_dash
from test_determinism import _trace, assert_trace_matches_model, model_view

pytestmark = requires_hopper

GROUPS = [(4, 4), (4, 2), (8, 2), (8, 1), (16, 2)]  # (query heads, K/V heads): groups 1, 2, 4, MQA 8, 8
LENGTHS = [(113, 203), (1000, 1000), (2048, 1000), (1, 300), (777, 777)]


@pytest.mark.parametrize("heads,heads_kv", GROUPS, ids=[f"h{h}kv{k}" for h, k in GROUPS])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "fp16"])
@pytest.mark.parametrize("head_dim", [64, 128])
def test_backward_matches_reference(head_dim, dtype, causal, heads, heads_kv):
    seqlen_q, seqlen_k = LENGTHS[(heads + heads_kv + head_dim + int(causal)) % len(LENGTHS)]
    inputs = make_inputs(2, seqlen_q, seqlen_k, heads, head_dim, dtype, causal, seed=heads * 31 + heads_kv,
                         heads_kv=heads_kv)
    deterministic = (heads_kv + int(causal) + head_dim // 64) % 2 == 0
    grads = run_dash(inputs, causal, deterministic=deterministic)
    assert grads[1].shape == inputs["k"].shape and grads[2].shape == inputs["v"].shape
    check_against_reference(inputs, causal, grads, dtype)


@pytest.mark.parametrize("heads,heads_kv", GROUPS, ids=[f"h{h}kv{k}" for h, k in GROUPS])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("head_dim", [64, 128])
def test_forward_matches_reference(head_dim, causal, heads, heads_kv):
    dtype = torch.bfloat16 if heads_kv % 2 == 0 else torch.float16
    seqlen_q, seqlen_k = LENGTHS[(heads + heads_kv + head_dim) % len(LENGTHS)]
    inputs = make_inputs(2, seqlen_q, seqlen_k, heads, head_dim, dtype, causal, seed=7, heads_kv=heads_kv)
    q, k, v = inputs["q"], inputs["k"], inputs["v"]
    poison_allocator(q)
    out, lse = dash.attn_fwd(q, k, v, causal=causal)
    ref_out, ref_lse = reference.attention_forward(q, k, v, causal=causal, compute_dtype=torch.float64)
    pt_out, _ = reference.attention_forward(q, k, v, causal=causal, compute_dtype=dtype)
    assert_close_fa_style("out", out, ref_out.double(), pt_out, dtype)
    finite = torch.isfinite(ref_lse)
    assert torch.equal(torch.isfinite(lse), finite)
    assert (lse[finite].double() - ref_lse[finite].double()).abs().max() < 1e-3


BITWISE_SHAPES = [  # batch, heads, heads_kv, seqlen_q, seqlen_k, head_dim, causal
    (1, 32, 8, 2048, 2048, 128, True),    # Llama-3-8B's attention
    (2, 16, 2, 1531, 1000, 64, False),
    (2, 8, 1, 2048, 2048, 64, True),      # MQA
]


@pytest.mark.parametrize("batch,heads,heads_kv,seqlen_q,seqlen_k,head_dim,causal", BITWISE_SHAPES)
def test_bitwise_reproducible(batch, heads, heads_kv, seqlen_q, seqlen_k, head_dim, causal):
    inputs = make_inputs(batch, seqlen_q, seqlen_k, heads, head_dim, torch.bfloat16, causal, seed=3,
                         heads_kv=heads_kv)
    first = run_dash(inputs, causal, deterministic=True)
    for i in range(49):
        again = run_dash(inputs, causal, deterministic=True)
        for name, a, b in zip(("dq", "dk", "dv"), first, again):
            assert torch.equal(a, b), f"{name} differs from the first run at repeat {i + 1}"


TRACE_CASES = [  # (batch, heads, heads_kv, seqlen_q, seqlen_k, head_dim, causal), schedule, sm_margin
    ((1, 32, 8, 2048, 2048, 128, True), "auto", 0),
    ((1, 32, 8, 2048, 2048, 128, True), "descending", 0),
    ((1, 32, 8, 2048, 2048, 128, True), "symmetric_shift", 110),
    ((2, 16, 4, 2048, 2048, 128, False), "auto", 0),
    ((2, 16, 4, 2048, 2048, 128, False), "shift", 100),
    ((2, 8, 1, 1000, 1531, 64, False), "ascending", 0),
    ((3, 6, 3, 1531, 1000, 128, True), "auto", 117),
]


@pytest.mark.parametrize("shape,schedule,sm_margin", TRACE_CASES)
def test_recorded_order_matches_schedule(shape, schedule, sm_margin):
    batch, heads, heads_kv, seqlen_q, seqlen_k, head_dim, causal = shape
    inputs = make_inputs(batch, seqlen_q, seqlen_k, heads, head_dim, torch.bfloat16, causal, seed=4,
                         heads_kv=heads_kv)
    view = model_view(inputs, causal, schedule, sm_margin)
    assert view.heads_kv == heads_kv
    _, trace, count = _trace(inputs, causal, deterministic=True, schedule=schedule, sm_margin=sm_margin)
    assert_trace_matches_model(view, trace, count)


@pytest.mark.parametrize("heads_kv", [70000, 7000])
def test_more_than_65535_heads(heads_kv):
    """The pre/postprocess grids are 1-D: 70000 heads (a 3-D grid caps them at 65535)."""
    heads, seqlen, head_dim = 70000, 24, 64
    inputs = make_inputs(1, seqlen, seqlen, heads, head_dim, torch.bfloat16, True, seed=9, heads_kv=heads_kv)
    out, lse = dash.attn_fwd(inputs["q"], inputs["k"], inputs["v"], causal=True)
    ref_out, _ = reference.attention_forward(inputs["q"], inputs["k"], inputs["v"], causal=True)
    assert (out.float() - ref_out.float()).abs().max() < 0.05
    grads = run_dash(inputs, True, deterministic=True)
    ref = reference.attention_backward(inputs["dout"], inputs["q"], inputs["k"], inputs["v"], causal=True,
                                       compute_dtype=torch.float32)
    for name, g, r in zip(("dq", "dk", "dv"), grads, ref):
        assert not torch.isnan(g).any(), name
        assert (g.float() - r.float()).abs().max() < 0.1, name


SPLIT_CASES = [  # batch, heads, heads_kv, seqlen_q, seqlen_k, head_dim, causal, parts
    (2, 8, 1, 1000, 1000, 128, True, 4),     # MQA
    (2, 8, 2, 777, 1531, 64, False, 2),
    (1, 16, 2, 2048, 2048, 128, True, 8),
    (3, 16, 4, 300, 301, 64, True, 4),
]


@pytest.mark.parametrize("batch,heads,heads_kv,seqlen_q,seqlen_k,head_dim,causal,parts", SPLIT_CASES)
def test_split_groups(monkeypatch, batch, heads, heads_kv, seqlen_q, seqlen_k, head_dim, causal, parts):
    """A query-head group split over `parts` tasks (their dK / dV added in part order):
    against fp64 in both modes, 20-repeat bitwise, and the recorded dQ order is the model's."""
    monkeypatch.setenv("DASH_KV_PARTS", str(parts))
    inputs = make_inputs(batch, seqlen_q, seqlen_k, heads, head_dim, torch.bfloat16, causal, seed=parts,
                         heads_kv=heads_kv)
    plan = dash.attn_bwd_plan(inputs["q"], inputs["k"], causal, True)
    assert plan["kv_parts"] == parts and "split" in plan["reason"]
    for deterministic in (False, True):
        check_against_reference(inputs, causal, run_dash(inputs, causal, deterministic=deterministic),
                                torch.bfloat16)
    first = run_dash(inputs, causal, deterministic=True)
    for i in range(19):
        again = run_dash(inputs, causal, deterministic=True)
        for name, a, b in zip(("dq", "dk", "dv"), first, again):
            assert torch.equal(a, b), f"{name} differs from the first run at repeat {i + 1}"
    view = model_view(inputs, causal)
    assert view.parts == parts
    _, trace, count = _trace(inputs, causal, deterministic=True)
    assert_trace_matches_model(view, trace, count)


def test_split_rule_and_override(monkeypatch):
    """MQA at 16k tokens: deterministic, the walk's length decides (256 Q tiles a query head:
    split as far as the group allows, on any grid); not deterministic, 64 symmetric-shift
    pairs cannot fill 132 SMs and eight parts make 3 rounds. Llama 32/8 (16k tokens as 8 x
    2k, walks of 4 x 32 steps): deterministic causal splits in 2 (bands want walks of at
    most 64 steps), full does not, and neither does the non-deterministic call, whose walks
    fill the grid and are within hdim 128's 256 steps; at 16k (4 x 256 steps) the
    non-deterministic causal call splits in 4, its full mask not, and hdim 64 (no such limit in
    the trait table) not; 192 and 256 bands split at least in 2 in both modes, 256's deterministic
    ones until walks of 128 steps, 192's non-deterministic full masks until walks of 64 (their
    traits);
    DASH_KV_PARTS must divide the group."""
    mqa = make_inputs(1, 16384, 16384, 16, 128, torch.bfloat16, True, seed=1, heads_kv=1)
    for margin in (0, 20, 131):
        assert dash.attn_bwd_plan(mqa["q"], mqa["k"], True, True, sm_margin=margin)["kv_parts"] == 16
    if torch.cuda.get_device_properties(0).multi_processor_count == 132:
        assert dash.attn_bwd_plan(mqa["q"], mqa["k"], True, False)["kv_parts"] == 8
    llama = make_inputs(8, 2048, 2048, 32, 128, torch.bfloat16, True, seed=1, heads_kv=8)
    assert dash.attn_bwd_plan(llama["q"], llama["k"], True, True)["kv_parts"] == 2
    assert dash.attn_bwd_plan(llama["q"], llama["k"], False, True)["kv_parts"] == 1
    assert dash.attn_bwd_plan(llama["q"], llama["k"], True, False)["kv_parts"] == 1
    long_q = torch.empty(1, 16384, 32, 128, dtype=torch.bfloat16, device="cuda")
    long_k = torch.empty(1, 16384, 8, 128, dtype=torch.bfloat16, device="cuda")
    plan = dash.attn_bwd_plan(long_q, long_k, True, False)
    assert plan["kv_parts"] == 4 and "within 256 steps" in plan["reason"]
    assert dash.attn_bwd_plan(long_q, long_k, False, False)["kv_parts"] == 1
    q64 = torch.empty(1, 16384, 64, 64, dtype=torch.bfloat16, device="cuda")  # hdim 64: no walk limit (trait)
    assert dash.attn_bwd_plan(q64, torch.empty(1, 16384, 16, 64, dtype=torch.bfloat16, device="cuda"),
                              True, False)["kv_parts"] == 1
    # 256 and 192, groups of 4 (the trait table's bwd_band_min_parts 2): split at 1k in both modes
    for hd in (192, 256):
        q, k = (torch.empty(16, 1024, h, hd, dtype=torch.bfloat16, device="cuda") for h in (16, 4))
        for deterministic in (True, False):
            plan = dash.attn_bwd_plan(q, k, True, deterministic)
            assert plan["kv_parts"] == 2 and "at least 2 parts" in plan["reason"], (hd, deterministic)
        assert dash.attn_bwd_plan(q, k, False, True)["kv_parts"] == 1  # full masks: no minimum
    # 192 and 192 / 128 full masks, groups of 4: walks of at most 64 steps in both modes (their
    # bwd_nondet_full_walk_steps and bwd_det_full_walk_steps), 2 parts at 2k, 4 at 4k; the
    # deterministic calls deal 4 walks a chunk (deal_chunk_for's split floor)
    for hd_v in (192, 128):
        for seqlen, parts in ((2048, 2), (4096, 4)):
            q, k = (torch.empty(16384 // seqlen, seqlen, h, 192, dtype=torch.bfloat16, device="cuda") for h in (16, 4))
            for deterministic in (False, True):
                plan = dash.attn_bwd_plan(q, k, False, deterministic, head_dim_v=hd_v)
                assert plan["kv_parts"] == parts and "within 64 steps" in plan["reason"], (hd_v, seqlen, deterministic)
            assert plan["deal_chunk"] == 4, plan
    # 256 at 4k, deterministic: walks of at most 128 steps (its bwd_det_band_walk_steps), 2 parts
    q, k = (torch.empty(4, 4096, h, 256, dtype=torch.bfloat16, device="cuda") for h in (16, 4))
    plan = dash.attn_bwd_plan(q, k, True, True)
    assert plan["kv_parts"] == 2 and "within 128 steps" in plan["reason"]
    monkeypatch.setenv("DASH_KV_PARTS", "3")
    with pytest.raises(ValueError, match="DASH_KV_PARTS"):
        dash.attn_bwd_plan(llama["q"], llama["k"], True, True)
