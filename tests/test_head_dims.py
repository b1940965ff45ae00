"""Every (head_dim, head_dim_v) pair of the trait table, forward and backward.

The pairs come from dash._traits (generated from csrc/instantiations/traits.py, importable
without the op library): HEAD_DIMS (forward), BWD_TILE (the pairs with a backward; the rest
are forward-only). A new table entry is tested here without editing this file. v may have
another head dim than q and k (head_dim_v): out and dout are then q's shape with v's last
dim.

GPU (an sm90 GPU and the library):
  * forward of every pair against an fp64 reference with FlashAttention's tolerances: bf16 /
    fp16 x full / causal / (37, 0) / (50, 50) windows on odd, unequal lengths with GQA, plus
    extra shapes (MHA, MQA, seqlen_q > seqlen_k, one query, many tiles) and softcap; out and
    softmax_lse checked, outputs poisoned with NaN first; rows that see no key get out 0 and
    lse -inf;
  * packed (variable-length) forward of every pair against a per-sequence reference (length
    1 and empty sequences, unequal q / k lengths);
  * backward of every pair with one (BWD_TILE) against fp64: the dtype x mask matrix for all,
    and the pairs this change adds (NEW_BWD_PAIRS) thoroughly: extra shapes in both modes,
    softcap, packed batches, flash_attn_func through autograd, 50-repeat bitwise
    reproducibility (fixed and packed) and the recorded dQ order against the schedule model;
  * forward-only pairs: the backward ops raise NotImplementedError naming the head dim,
    autograd through the op raises in .backward(), flash_attn_func / flash_attn_varlen_func
    with inputs that require grad raise before any op runs, and under torch.no_grad run and
    match the reference.

CPU (the library; no GPU): the trait table is self-consistent and the library answers from
it; unsupported pairs raise ValueError from the real ops on CPU tensors (and from the fakes),
forward-only pairs NotImplementedError from attn_bwd / attn_varlen_bwd (and their fakes)
before the "needs CUDA" error; the fakes give out (..., head_dim_v); flash_attn_func raises
for forward-only pairs with inputs that require grad before reaching an op.
"""
import itertools
import re

import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

import dash
from conftest import requires_hopper, requires_library
from dash import _traits, reference
from dash import flash_attn_interface as fai
from dash.geometry import SeqTiles, make_mask_window
from band_helpers import (assert_bitwise_repeats, assert_varlen_bitwise_repeats, check_lse, make_qkv, make_varlen,
                          run_bwd, run_fwd, varlen_bwd, varlen_visibility, visibility)
from gpu_helpers import assert_close_fa_style, make_inputs, poison_allocator
from op_test_doubles import DashCallSpy, reference_kernels
from test_determinism import REPEATS, _trace, assert_trace_matches_model, model_view
from test_softcap import amplify, assert_scores_exceed_cap, lse_atol
from test_softcap import check_backward as check_backward_softcap
from test_softcap import check_varlen as check_varlen_softcap
from test_window import _trace_fixed, expected_order, reference_out_lse
from test_window import check_backward as check_backward_plain
from test_window import check_varlen as check_varlen_plain

BF16, FP16 = torch.bfloat16, torch.float16
FULL = (-1, -1)

# --- the pairs, from the trait table --------------------------------------------------------------

FWD_PAIRS = list(_traits.HEAD_DIMS)
BWD_PAIRS = [p for p in FWD_PAIRS if p in _traits.BWD_TILE]
FWD_ONLY_PAIRS = [p for p in FWD_PAIRS if p not in _traits.BWD_TILE]

# The backward pairs beyond 64 and 128 (which test_bwd_correctness, test_window, test_softcap,
# test_determinism, ... cover): they get the thorough backward tests below, the 50-repeat
# bitwise ones and the dQ traces against the model included.
COVERED_ELSEWHERE = [(64, 64), (128, 128)]
NEW_BWD_PAIRS = [p for p in BWD_PAIRS if p not in COVERED_ELSEWHERE]

# Pairs no pass supports (examples; any that the table gains is dropped): a q / k head dim
# not in the table, and known q / k head dims with a v head dim they are not paired with.
UNSUPPORTED_PAIRS = [p for p in [(100, 100), (32, 32), (128, 64), (64, 128), (192, 64), (257, 257)]
                     if p not in _traits.FWD_TILE]


def _pair_id(pair):
    head_dim, head_dim_v = pair
    return f"hd{head_dim}" if head_dim == head_dim_v else f"hd{head_dim}x{head_dim_v}"


def _mask_id(causal, window):
    return f"{'causal' if causal else 'nc'}-{window[0]}_{window[1]}"


def _dtype_id(dtype):
    return "bf16" if dtype == BF16 else "fp16"


def _dims_text(pair):
    """How the ops' messages name a pair: 'head_dim 192' or 'head_dim 192 with head_dim_v 128'."""
    head_dim, head_dim_v = pair
    return f"head_dim {head_dim}" + ("" if head_dim == head_dim_v else f" with head_dim_v {head_dim_v}")


def _fai_argument(pair):
    """The argument flash_attn_interface names for a forward-only pair: head_dim, or head_dim_v
    when v's differs."""
    head_dim, head_dim_v = pair
    return ("head_dim", head_dim) if head_dim == head_dim_v else ("head_dim_v", head_dim_v)


PAIR_IDS = [_pair_id(p) for p in FWD_PAIRS]
BWD_IDS = [_pair_id(p) for p in BWD_PAIRS]
NEW_BWD_IDS = [_pair_id(p) for p in NEW_BWD_PAIRS]
FWD_ONLY_IDS = [_pair_id(p) for p in FWD_ONLY_PAIRS]

MASKS = [(False, FULL), (True, FULL), (False, (37, 0)), (False, (50, 50))]
MASK_IDS = [_mask_id(*m) for m in MASKS]


# --- GPU helpers (v's head dim may differ from q's) -----------------------------------------------

def make_pair_qkv(batch, seqlen_q, seqlen_k, heads, pair, dtype, heads_kv=None, seed=0):
    """band_helpers.make_qkv's q, k, v, dout; with head_dim_v != head_dim, v and dout drawn with
    v's head dim."""
    head_dim, head_dim_v = pair
    q, k, v, dout = make_qkv(batch, seqlen_q, seqlen_k, heads, head_dim, dtype, heads_kv=heads_kv, seed=seed)
    if head_dim_v != head_dim:
        gen = torch.Generator(device="cuda").manual_seed(seed + 7919)
        v = torch.randn(*v.shape[:3], head_dim_v, generator=gen, device="cuda", dtype=dtype)
        dout = torch.randn(*dout.shape[:3], head_dim_v, generator=gen, device="cuda", dtype=dtype)
    return q, k, v, dout


def make_pair_varlen(lengths_q, lengths_k, heads, heads_kv, pair, dtype, seed=0):
    """band_helpers.make_varlen's packed batch, v and dout with v's head dim."""
    head_dim, head_dim_v = pair
    x = make_varlen(lengths_q, lengths_k, heads, heads_kv, head_dim, dtype, seed=seed)
    if head_dim_v != head_dim:
        gen = torch.Generator(device="cuda").manual_seed(seed + 7919)
        x["v"] = torch.randn(*x["v"].shape[:2], head_dim_v, generator=gen, device="cuda", dtype=dtype)
        x["dout"] = torch.randn(*x["dout"].shape[:2], head_dim_v, generator=gen, device="cuda", dtype=dtype)
    return x


def run_varlen_fwd(x, causal, window, **kw):
    """dash.attn_varlen_fwd with NaN-poisoned allocations of out's and lse's sizes."""
    total_q, heads, _ = x["q"].shape
    poison_allocator(torch.empty(total_q, heads, x["v"].shape[-1], dtype=x["q"].dtype, device="cuda"),
                     torch.empty(heads, total_q, dtype=torch.float32, device="cuda"))
    return dash.attn_varlen_fwd(x["q"], x["k"], x["v"], x["cu_q"], x["cu_k"], x["max_q"], x["max_k"], causal=causal,
                                window_size=window, **kw)


def check_forward(q, k, v, out, lse, causal, window, softcap=0.0):
    """out (q's shape with v's head dim) against fp64 with FlashAttention's tolerance, lse
    against fp64 (tanh.approx's allowance with softcap), rows that see no key: out 0, lse -inf."""
    dtype = q.dtype
    ref_out, ref_lse = reference.attention_forward(q.double(), k.double(), v.double(), None, causal,
                                                   compute_dtype=torch.float64, window_size=window, softcap=softcap)
    pt_out, _ = reference.attention_forward(q, k, v, None, causal, compute_dtype=dtype, window_size=window,
                                            softcap=softcap)
    assert out.shape == (*q.shape[:-1], v.shape[-1]) and out.dtype == dtype and out.is_contiguous()
    assert_close_fa_style("out", out, ref_out, pt_out, dtype)
    assert torch.isfinite(out).all(), "out: inf"
    check_lse(lse, ref_lse, lse_atol(softcap, q, k))
    rows_see, _ = visibility(q.shape[1], k.shape[1], causal, window)
    if (~rows_see).any():
        assert out[:, ~rows_see].abs().max() == 0, "rows that see no key must get out 0"
        assert torch.isneginf(lse[:, :, ~rows_see]).all(), "rows that see no key must get lse -inf"


def varlen_reference_forward(x, causal, window, compute_dtype, softcap=0.0):
    """Packed forward one sequence at a time with reference.attention_forward: (out (total_q,
    heads, head_dim_v) in q's dtype, lse fp32 (heads, total_q)). (reference.attention_varlen_forward
    allocates out like q, so it does not take head_dim_v != head_dim.)"""
    q, k, v = x["q"], x["k"], x["v"]
    if compute_dtype == torch.float64:
        q, k, v = q.double(), k.double(), v.double()
    out = torch.zeros(*q.shape[:2], v.shape[-1], dtype=q.dtype, device=q.device)
    lse = torch.full((q.shape[1], q.shape[0]), float("-inf"), dtype=torch.float32, device=q.device)
    cu_q, cu_k = x["cu_q"].tolist(), x["cu_k"].tolist()
    for b in range(len(cu_q) - 1):
        rows_q, rows_k = slice(cu_q[b], cu_q[b + 1]), slice(cu_k[b], cu_k[b + 1])
        if cu_q[b] == cu_q[b + 1] or cu_k[b] == cu_k[b + 1]:
            continue  # no rows, or no key: out 0, lse -inf
        o, l = reference.attention_forward(q[None, rows_q], k[None, rows_k], v[None, rows_k], None, causal,
                                           compute_dtype, window, softcap)
        out[rows_q], lse[:, rows_q] = o[0], l[0]
    return out, lse


def check_varlen_forward(x, out, lse, causal, window, softcap=0.0):
    dtype = x["q"].dtype
    ref_out, ref_lse = varlen_reference_forward(x, causal, window, torch.float64, softcap)
    pt_out, _ = varlen_reference_forward(x, causal, window, dtype, softcap)
    assert out.shape == (*x["q"].shape[:2], x["v"].shape[-1]) and out.dtype == dtype
    assert lse.shape == (x["q"].shape[1], x["q"].shape[0])
    assert_close_fa_style("out", out, ref_out, pt_out, dtype)
    check_lse(lse, ref_lse, lse_atol(softcap, x["q"], x["k"]))
    rows_see, _ = varlen_visibility(x, causal, window)
    assert torch.equal(torch.isneginf(ref_lse).all(0), ~rows_see)
    if (~rows_see).any():
        assert out[~rows_see].abs().max() == 0, "rows that see no key must get out 0"


def check_backward(dout, q, k, v, grads, causal, window, softcap=0.0):
    """test_window's check (fp64, FlashAttention's tolerance, zero rows / keys outside the band),
    or test_softcap's (with FlashAttention-3's softcap allowance) when softcap > 0."""
    if softcap > 0:
        check_backward_softcap(dout, q, k, v, grads, causal, window, softcap)
    else:
        check_backward_plain(dout, q, k, v, grads, causal, window)


def check_varlen_backward(x, grads, causal, window, softcap=0.0):
    if softcap > 0:
        check_varlen_softcap(x, None, None, grads, causal, window, softcap)
    else:
        check_varlen_plain(x, None, None, grads, causal, window)


def fwd_bwd_and_check(q, k, v, dout, causal, window, deterministic, softcap=0.0):
    """The forward against the reference, then the backward on the forward's own out and lse
    (what autograd hands it) against the reference."""
    out, lse = run_fwd(q, k, v, causal, window, softcap=softcap)
    check_forward(q, k, v, out, lse, causal, window, softcap)
    grads = run_bwd(dout, q, k, v, out, lse, causal, window, deterministic=deterministic, softcap=softcap)
    check_backward(dout, q, k, v, grads, causal, window, softcap)
    return out, lse, grads


# --- GPU: forward of every pair --------------------------------------------------------------------

@requires_hopper
@pytest.mark.parametrize("causal,window", MASKS, ids=MASK_IDS)
@pytest.mark.parametrize("dtype", [BF16, FP16], ids=["bf16", "fp16"])
@pytest.mark.parametrize("pair", FWD_PAIRS, ids=PAIR_IDS)
def test_forward_matches_reference(pair, dtype, causal, window):
    """GQA (6 query heads on 2 K/V heads), seqlen_q 333 / seqlen_k 517 (no tile multiples)."""
    seed = FWD_PAIRS.index(pair) * 100 + MASKS.index((causal, window)) * 10 + (dtype == FP16)
    q, k, v, _ = make_pair_qkv(2, 333, 517, 6, pair, dtype, heads_kv=2, seed=seed)
    out, lse = run_fwd(q, k, v, causal, window)
    check_forward(q, k, v, out, lse, causal, window)


FWD_SHAPES = [  # id, batch, seqlen_q, seqlen_k, heads, heads_kv
    ("mha-777", 2, 777, 777, 4, 4),
    ("gqa-517x333", 2, 517, 333, 6, 2),   # seqlen_q > seqlen_k: causal rows without keys
    ("mqa-1x300", 1, 1, 300, 3, 1),
    ("mha-2049", 1, 2049, 2049, 2, 2),    # many tiles
]


@requires_hopper
@pytest.mark.parametrize("case", FWD_SHAPES, ids=[c[0] for c in FWD_SHAPES])
@pytest.mark.parametrize("pair", FWD_PAIRS, ids=PAIR_IDS)
def test_forward_shapes(pair, case):
    """Equal odd lengths, MHA / MQA, one query, many tiles; mask and dtype rotate so that each
    pair meets every mask and both dtypes."""
    i, j = FWD_PAIRS.index(pair), FWD_SHAPES.index(case)
    _, batch, seqlen_q, seqlen_k, heads, heads_kv = case
    causal, window = MASKS[(i + j) % len(MASKS)]
    dtype = (BF16, FP16)[(i + j // 2) % 2]
    q, k, v, _ = make_pair_qkv(batch, seqlen_q, seqlen_k, heads, pair, dtype, heads_kv=heads_kv, seed=1000 + 10 * i + j)
    out, lse = run_fwd(q, k, v, causal, window)
    check_forward(q, k, v, out, lse, causal, window)


@requires_hopper
@pytest.mark.parametrize("pair", FWD_PAIRS, ids=PAIR_IDS)
def test_forward_softcap(pair):
    """softcap 30 with q, k scaled so that the cap bends the scores (test_softcap.amplify)."""
    i = FWD_PAIRS.index(pair)
    causal, window = MASKS[i % len(MASKS)]
    dtype = (BF16, FP16)[i % 2]
    softcap = 30.0
    q, k, v, _ = make_pair_qkv(2, 333, 517, 6, pair, dtype, heads_kv=2, seed=2000 + i)
    q, k = amplify(q, k, softcap)
    assert_scores_exceed_cap(q, k, softcap)
    out, lse = run_fwd(q, k, v, causal, window, softcap=softcap)
    check_forward(q, k, v, out, lse, causal, window, softcap)


NO_KEY = [  # seqlen_q, seqlen_k, causal, window: rows that see no key, none of the lengths a tile multiple
    (300, 129, False, (0, 0)),   # rows 0..170: their diagonal is left of key 0
    (1000, 17, True, FULL),      # rows 0..982
]


@requires_hopper
@pytest.mark.parametrize("seqlen_q,seqlen_k,causal,window", NO_KEY,
                         ids=[f"{sq}x{sk}-{_mask_id(c, w)}" for sq, sk, c, w in NO_KEY])
@pytest.mark.parametrize("pair", FWD_PAIRS, ids=PAIR_IDS)
def test_forward_rows_without_keys(pair, seqlen_q, seqlen_k, causal, window):
    """Outputs start as NaN (poisoned allocations): every element is written, rows that see no
    key get out exactly 0 and lse -inf, nothing NaN or inf elsewhere."""
    rows_see, _ = visibility(seqlen_q, seqlen_k, causal, window)
    assert (~rows_see).any() and rows_see.any(), "the case must have rows with and without keys"
    q, k, v, _ = make_pair_qkv(2, seqlen_q, seqlen_k, 4, pair, BF16, heads_kv=2, seed=seqlen_q + pair[0])
    out, lse = run_fwd(q, k, v, causal, window)
    assert torch.isfinite(out).all(), "out: NaN or inf (unwritten elements?)"
    assert not torch.isnan(lse).any() and not torch.isposinf(lse).any()
    assert torch.isfinite(lse[:, :, rows_see]).all()
    check_forward(q, k, v, out, lse, causal, window)
    again, lse_again = run_fwd(q, k, v, causal, window)
    assert torch.equal(out, again) and torch.equal(lse, lse_again), "the forward is not bitwise reproducible"


# --- GPU: packed (variable-length) forward of every pair -------------------------------------------

VARLEN_MIXES = {
    "odd": ([1, 333, 17, 129, 700], None),
    "unequal": ([333, 1, 0, 129, 64], [517, 3, 5, 1, 64]),  # an empty sequence; a 1-key sequence
}
VARLEN_MASKS = [(False, FULL), (True, FULL), (False, (37, 0))]
VARLEN_MASK_IDS = [_mask_id(*m) for m in VARLEN_MASKS]


@requires_hopper
@pytest.mark.parametrize("mix", sorted(VARLEN_MIXES))
@pytest.mark.parametrize("causal,window", VARLEN_MASKS, ids=VARLEN_MASK_IDS)
@pytest.mark.parametrize("pair", FWD_PAIRS, ids=PAIR_IDS)
def test_varlen_forward_matches_reference(pair, causal, window, mix):
    i, j = FWD_PAIRS.index(pair), VARLEN_MASKS.index((causal, window))
    dtype = (BF16, FP16)[(i + j) % 2]
    heads, heads_kv = [(6, 2), (4, 4), (4, 1)][(i + j + len(mix)) % 3]
    x = make_pair_varlen(*VARLEN_MIXES[mix], heads, heads_kv, pair, dtype, seed=3000 + 10 * i + j)
    out, lse = run_varlen_fwd(x, causal, window)
    check_varlen_forward(x, out, lse, causal, window)


# --- GPU: backward of every pair that has one --------------------------------------------------------

@requires_hopper
@pytest.mark.parametrize("causal,window", MASKS, ids=MASK_IDS)
@pytest.mark.parametrize("dtype", [BF16, FP16], ids=["bf16", "fp16"])
@pytest.mark.parametrize("pair", BWD_PAIRS, ids=BWD_IDS)
def test_backward_matches_reference(pair, dtype, causal, window):
    """GQA 6 / 2, seqlen_q 333 / seqlen_k 517; the backward mode rotates."""
    i, j = BWD_PAIRS.index(pair), MASKS.index((causal, window))
    deterministic = (i + j + (dtype == FP16)) % 2 == 0
    q, k, v, dout = make_pair_qkv(2, 333, 517, 6, pair, dtype, heads_kv=2, seed=4000 + 10 * i + j)
    _, _, grads = fwd_bwd_and_check(q, k, v, dout, causal, window, deterministic)
    assert grads[1].shape == k.shape and grads[2].shape == v.shape


@requires_hopper
@pytest.mark.parametrize("deterministic", [True, False], ids=["det", "nondet"])
@pytest.mark.parametrize("case", FWD_SHAPES, ids=[c[0] for c in FWD_SHAPES])
@pytest.mark.parametrize("pair", NEW_BWD_PAIRS, ids=NEW_BWD_IDS)
def test_new_backward_shapes(pair, case, deterministic):
    """The new backward pairs on MHA / GQA / MQA, one query, many tiles, seqlen_q > seqlen_k,
    both modes; mask and dtype rotate."""
    j = FWD_SHAPES.index(case)
    _, batch, seqlen_q, seqlen_k, heads, heads_kv = case
    causal, window = MASKS[(j + deterministic) % len(MASKS)]
    dtype = (BF16, FP16)[(j + deterministic) // 2 % 2]
    q, k, v, dout = make_pair_qkv(batch, seqlen_q, seqlen_k, heads, pair, dtype, heads_kv=heads_kv, seed=5000 + j)
    fwd_bwd_and_check(q, k, v, dout, causal, window, deterministic)


@requires_hopper
@pytest.mark.parametrize("deterministic", [True, False], ids=["det", "nondet"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("pair", NEW_BWD_PAIRS, ids=NEW_BWD_IDS)
def test_new_backward_groups_split_by_walk_length(pair, causal, deterministic):
    """GQA 32 / 8 at 2200 tokens: the group walks (at least 144 KV tiles x KV heads) fill the
    grid, so the per-head-dim walk limits decide the split (the trait table's group-split knobs
    through dash.schedule's mirror, e.g. 192's full masks in 4 parts when not deterministic: walks
    of 35 Q tiles x 4 heads over 64 steps); the split call against the reference."""
    from dash.schedule import group_split_traits, kv_parts_fill_grid, kv_parts_for, kv_parts_minimum, walk_step_limit
    q, k, v, dout = make_pair_qkv(1, 2200, 2200, 32, pair, BF16, heads_kv=8, seed=31 + causal)
    plan = dash.attn_bwd_plan(q, k, causal, deterministic, head_dim_v=pair[1])
    block_m, block_n = _traits.BWD_TILE[pair]
    traits = group_split_traits(*pair)
    if deterministic or not causal:
        # items: KV tiles x KV heads, a grid's worth (non-deterministic causal calls may deal KV
        # tile pairs, fewer items than CTAs: the grid rule, not checked here)
        items = -(-2200 // block_n) * 8
        assert items >= plan["grid"]
        expected = kv_parts_for(items, 4, plan["grid"], -(-2200 // block_m),
                                walk_step_limit(False, deterministic, not causal, traits),
                                kv_parts_fill_grid(False, deterministic), kv_parts_minimum(False, not causal, traits))
        assert plan["kv_parts"] == expected, plan
    else:
        assert plan["kv_parts"] >= traits.band_min_parts, plan
    if pair[0] == 192 and not deterministic:
        assert plan["kv_parts"] == 4 and "within 64 steps" in plan["reason"], plan
    fwd_bwd_and_check(q, k, v, dout, causal, FULL, deterministic)


@requires_hopper
@pytest.mark.parametrize("causal,window", MASKS, ids=MASK_IDS)
@pytest.mark.parametrize("pair", BWD_PAIRS, ids=BWD_IDS)
def test_backward_softcap(pair, causal, window):
    """softcap 30 (the backward's capped-score instantiations), inputs scaled past the cap."""
    i, j = BWD_PAIRS.index(pair), MASKS.index((causal, window))
    dtype = (BF16, FP16)[(i + j) % 2]
    softcap = 30.0
    q, k, v, dout = make_pair_qkv(2, 333, 517, 6, pair, dtype, heads_kv=2, seed=6000 + 10 * i + j)
    q, k = amplify(q, k, softcap)
    assert_scores_exceed_cap(q, k, softcap)
    fwd_bwd_and_check(q, k, v, dout, causal, window, deterministic=(i + j) % 2 == 0, softcap=softcap)


@requires_hopper
@pytest.mark.parametrize("mix", sorted(VARLEN_MIXES))
@pytest.mark.parametrize("causal,window", VARLEN_MASKS, ids=VARLEN_MASK_IDS)
@pytest.mark.parametrize("pair", BWD_PAIRS, ids=BWD_IDS)
def test_varlen_backward_matches_reference(pair, causal, window, mix):
    i, j = BWD_PAIRS.index(pair), VARLEN_MASKS.index((causal, window))
    dtype = (BF16, FP16)[(i + j + len(mix)) % 2]
    heads, heads_kv = [(6, 2), (4, 4), (4, 1)][(i + j) % 3]
    deterministic = (i + j + len(mix)) % 2 == 0
    x = make_pair_varlen(*VARLEN_MIXES[mix], heads, heads_kv, pair, dtype, seed=7000 + 10 * i + j)
    out, lse = run_varlen_fwd(x, causal, window)
    check_varlen_forward(x, out, lse, causal, window)
    grads = varlen_bwd(x, out, lse, causal, window, deterministic)
    check_varlen_backward(x, grads, causal, window)


@requires_hopper
@pytest.mark.parametrize("dtype", [BF16, FP16], ids=["bf16", "fp16"])
@pytest.mark.parametrize("causal,window", [(True, FULL), (False, (50, 50))], ids=["causal", "window"])
@pytest.mark.parametrize("pair", NEW_BWD_PAIRS, ids=NEW_BWD_IDS)
def test_new_varlen_backward_softcap(pair, causal, window, dtype):
    """Packed batches with softcap 30: in bf16 at 192, 192 / 128 and 256 the forward runs the
    fixed-offset softcap kernel (traits.py "fwd_capped_softmax"), in fp16 the plain kernel's capped
    walk."""
    softcap = 30.0
    x = make_pair_varlen(*VARLEN_MIXES["unequal"], 6, 2, pair, dtype, seed=7500)
    x["q"], x["k"] = amplify(x["q"], x["k"], softcap)
    out, lse = run_varlen_fwd(x, causal, window, softcap=softcap)
    check_varlen_forward(x, out, lse, causal, window, softcap)
    grads = varlen_bwd(x, out, lse, causal, window, True, softcap=softcap)
    check_varlen_backward(x, grads, causal, window, softcap)


@requires_hopper
@requires_hopper
@pytest.mark.parametrize("pair", NEW_BWD_PAIRS, ids=NEW_BWD_IDS)
def test_new_flash_attn_varlen_func_autograd(pair):
    x = make_pair_varlen([300, 1, 0, 777, 129], [500, 3, 17, 640, 129], 8, 2, pair, BF16, seed=8500)
    leaves = [x[n].detach().clone().requires_grad_() for n in ("q", "k", "v")]
    out, lse = fai.flash_attn_varlen_func(*leaves, x["cu_q"], x["cu_k"], x["max_q"], x["max_k"], causal=True,
                                          deterministic=True, return_attn_probs=True)
    out.backward(x["dout"])
    grads = tuple(t.grad for t in leaves)
    check_varlen_forward(x, out.detach(), lse, True, FULL)
    check_varlen_backward(x, grads, True, FULL)
    ops_out, ops_lse = run_varlen_fwd(x, True, FULL)
    assert torch.equal(out, ops_out) and torch.equal(lse, ops_lse)
    for a, b in zip(grads, varlen_bwd(x, ops_out, ops_lse, True, FULL, True)):
        assert torch.equal(a, b)


# --- GPU: determinism of the new backward pairs -------------------------------------------------------

BITWISE_FIXED = [  # batch, heads, heads_kv, seqlen_q, seqlen_k, causal, window, dtype
    (2, 8, 2, 2048, 2048, True, FULL, BF16),
    (1, 16, 4, 4097, 1000, False, (257, 100), FP16),
]


@requires_hopper
@pytest.mark.parametrize("batch,heads,heads_kv,seqlen_q,seqlen_k,causal,window,dtype", BITWISE_FIXED)
@pytest.mark.parametrize("pair", NEW_BWD_PAIRS, ids=NEW_BWD_IDS)
def test_new_backward_bitwise_reproducible(pair, batch, heads, heads_kv, seqlen_q, seqlen_k, causal, window, dtype):
    q, k, v, dout = make_pair_qkv(batch, seqlen_q, seqlen_k, heads, pair, dtype, heads_kv=heads_kv, seed=3)
    _, first = assert_bitwise_repeats(dout, q, k, v, causal, window, REPEATS)
    check_backward(dout, q, k, v, first, causal, window)


@requires_hopper
@pytest.mark.parametrize("pair", NEW_BWD_PAIRS, ids=NEW_BWD_IDS)
def test_new_varlen_backward_bitwise_reproducible(pair):
    causal, window = False, (63, 257)
    x = make_pair_varlen([3000, 1, 700, 5000, 129, 2100], [2000, 5, 1500, 5000, 0, 2500], 8, 2, pair, BF16, seed=9)
    out, lse = run_varlen_fwd(x, causal, window)
    first = assert_varlen_bitwise_repeats(x, out, lse, causal, window, REPEATS)
    assert all(torch.isfinite(g).all() for g in first)


ORDERED_NONDET_PAIRS = list(_traits.BWD_ORDERS_BOTH_MODES)  # the trait table's "bwd_nondet_order": "ordered"


@requires_hopper
@pytest.mark.parametrize("causal,window", [(False, FULL), (True, FULL), (False, (63, 257))],
                         ids=["full", "causal", "window"])
@pytest.mark.parametrize("pair", ORDERED_NONDET_PAIRS, ids=[_pair_id(p) for p in ORDERED_NONDET_PAIRS])
def test_ordered_head_dims_add_in_order_in_both_modes(pair, causal, window):
    """Where the trait table says "bwd_nondet_order": "ordered", a deterministic=False
    backward runs the ordered kernel too (the faster there): bit for bit the deterministic
    gradients, fixed length and packed."""
    q, k, v, dout = make_pair_qkv(2, 1500, 1300, 8, pair, BF16, heads_kv=2, seed=21)
    out, lse = run_fwd(q, k, v, causal, window)
    ordered = run_bwd(dout, q, k, v, out, lse, causal, window, deterministic=True)
    for _ in range(3):
        unordered = run_bwd(dout, q, k, v, out, lse, causal, window, deterministic=False)
        for name, a, b in zip(("dq", "dk", "dv"), ordered, unordered):
            assert torch.equal(a, b), f"{name}: deterministic=False differs from deterministic=True"
    x = make_pair_varlen([700, 1, 1500, 64], [900, 3, 1200, 64], 8, 2, pair, FP16, seed=22)
    out, lse = run_varlen_fwd(x, causal, window)
    ordered = varlen_bwd(x, out, lse, causal, window, True)
    unordered = varlen_bwd(x, out, lse, causal, window, False)
    for name, a, b in zip(("dq", "dk", "dv"), ordered, unordered):
        assert torch.equal(a, b), f"packed {name}: deterministic=False differs from deterministic=True"


TRACE_CASES = [  # (batch, heads, heads_kv, seqlen_q, seqlen_k, causal), schedule, sm_margin
    ((2, 8, 2, 2048, 2048, True), "auto", 0),
    ((2, 8, 8, 2048, 2048, False), "auto", 0),
    ((2, 16, 4, 2048, 2048, False), "shift", 100),   # a small grid: heads span rounds
    ((2, 8, 8, 2048, 2048, True), "descending", 0),
    ((3, 5, 5, 1531, 1000, True), "ascending", 117),
    ((2, 8, 8, 2048, 2048, True), "fa3_baseline", 0),
]


@requires_hopper
@pytest.mark.parametrize("shape,schedule,sm_margin", TRACE_CASES)
@pytest.mark.parametrize("pair", NEW_BWD_PAIRS, ids=NEW_BWD_IDS)
def test_new_backward_recorded_order_matches_schedule(pair, shape, schedule, sm_margin):
    """The ordered path runs with the new pair's tile shape: every dQ tile's recorded KV-tile
    order is the schedule model's (test_determinism's helpers)."""
    batch, heads, heads_kv, seqlen_q, seqlen_k, causal = shape
    inputs = make_inputs(batch, seqlen_q, seqlen_k, heads, pair[0], BF16, causal, seed=4, heads_kv=heads_kv,
                         head_dim_v=pair[1])
    view = model_view(inputs, causal, schedule, sm_margin)
    _, trace, count = _trace(inputs, causal, deterministic=True, schedule=schedule, sm_margin=sm_margin)
    assert_trace_matches_model(view, trace, count)


WINDOW_TRACE = [  # (batch, heads, heads_kv, seqlen_q, seqlen_k), causal, window
    ((2, 8, 2, 2048, 2048), True, (257, 0)),
    ((1, 4, 4, 4097, 1000), False, (63, 257)),
]


@requires_hopper
@pytest.mark.parametrize("shape,causal,window", WINDOW_TRACE)
@pytest.mark.parametrize("pair", NEW_BWD_PAIRS, ids=NEW_BWD_IDS)
def test_new_backward_recorded_order_windowed(pair, shape, causal, window):
    """Sliding windows run "diagonal": each dQ tile adds from its diagonal KV tile back to
    the first of its band (test_window.expected_order), with the new pair's tiles."""
    batch, heads, heads_kv, seqlen_q, seqlen_k = shape
    q, k, v, dout = make_pair_qkv(batch, seqlen_q, seqlen_k, heads, pair, BF16, heads_kv=heads_kv, seed=4)
    plan = dash.attn_bwd_plan(q, k, causal=causal, deterministic=True, window_size=window, head_dim_v=pair[1])
    assert plan["schedule"] == "diagonal", plan
    out, lse = reference_out_lse(q, k, v, causal, window)
    grads, trace, count = _trace_fixed(q, k, v, dout, out, lse, causal, window, True)
    block_m, block_n = dash.bwd_tile_shape(*pair)
    assert (block_m, block_n) == _traits.BWD_TILE[pair]
    tiles = SeqTiles(seqlen_q, seqlen_k, block_m, block_n, make_mask_window(causal, *window, seqlen_q, seqlen_k))
    assert trace.shape[2] == tiles.num_m_blocks()
    for m in range(tiles.num_m_blocks()):
        want = expected_order(tiles, m, "diagonal")
        for bb, hh in itertools.product(range(batch), range(heads)):
            got = trace[bb, hh, m, : count[bb, hh, m]].tolist()
            assert got == want, f"dQ tile {(bb, hh, m)}: order {got}, want {want}"
    check_backward(dout, q, k, v, grads, causal, window)


# --- GPU: forward-only pairs ---------------------------------------------------------------------

def _not_implemented(pair):
    """The ops' (and fakes') message for the backward of a forward-only pair."""
    return re.escape(_dims_text(pair)) + r" is not implemented yet"


@requires_hopper
@pytest.mark.parametrize("pair", FWD_ONLY_PAIRS, ids=FWD_ONLY_IDS)
def test_forward_only_backward_ops_raise(pair):
    """On CUDA tensors the backward ops raise NotImplementedError naming the head dims (before
    any kernel); autograd through the forward op raises it in .backward()."""
    q, k, v, dout = make_pair_qkv(2, 333, 517, 6, pair, BF16, heads_kv=2, seed=10)
    out, lse = dash.attn_fwd(q, k, v, causal=True)
    assert out.shape == (*q.shape[:-1], pair[1])
    with pytest.raises(NotImplementedError, match=_not_implemented(pair)):
        dash.attn_bwd(dout, q, k, v, out, lse, causal=True, deterministic=True)
    x = make_pair_varlen(*VARLEN_MIXES["odd"], 6, 2, pair, BF16, seed=11)
    vout, vlse = dash.attn_varlen_fwd(x["q"], x["k"], x["v"], x["cu_q"], x["cu_k"], x["max_q"], x["max_k"])
    assert vout.shape == (*x["q"].shape[:2], pair[1])
    with pytest.raises(NotImplementedError, match=_not_implemented(pair)):
        dash.attn_varlen_bwd(x["dout"], x["q"], x["k"], x["v"], vout, vlse, x["cu_q"], x["cu_k"], x["max_q"],
                             x["max_k"], deterministic=True)
    leaves = [t.detach().clone().requires_grad_() for t in (q, k, v)]
    grad_out, _ = dash.attn_fwd(*leaves, causal=True)  # the op itself does not look ahead
    assert torch.equal(grad_out.detach(), out)
    with pytest.raises(NotImplementedError, match=_not_implemented(pair)):
        grad_out.backward(dout)


@requires_hopper
@pytest.mark.parametrize("pair", FWD_ONLY_PAIRS, ids=FWD_ONLY_IDS)
def test_forward_only_flash_attn_func(pair):
    """Inputs that require grad: NotImplementedError naming the argument, before any op runs
    (no dash op reaches the dispatcher). Under torch.no_grad, or with inputs that do not
    require grad: runs, the reference's result, bitwise the op's, out with v's head dim."""
    q, k, v, _ = make_pair_qkv(2, 333, 517, 6, pair, FP16, heads_kv=2, seed=12)
    leaves = [t.detach().clone().requires_grad_() for t in (q, k, v)]
    name, value = _fai_argument(pair)
    spy = DashCallSpy()
    with spy, pytest.raises(NotImplementedError, match=rf"flash_attn_func: {name}={value} .*forward only"):
        fai.flash_attn_func(*leaves, causal=True, window_size=(50, 0))
    assert spy.calls == [], "an op ran before the head-dim check"
    with torch.no_grad():
        out, lse = fai.flash_attn_func(*leaves, causal=True, window_size=(50, 0), return_attn_probs=True)
    assert out.shape == (*q.shape[:-1], pair[1]) and not out.requires_grad
    check_forward(q, k, v, out, lse, True, (50, 0))
    ops_out, ops_lse = dash.attn_fwd(q, k, v, causal=True, window_size=(50, 0))
    assert torch.equal(out, ops_out) and torch.equal(lse, ops_lse)
    assert torch.equal(fai.flash_attn_func(q, k, v, causal=True, window_size=(50, 0)), ops_out)
    if pair[0] == pair[1]:
        qkv = torch.stack((q, q, q), dim=2).requires_grad_()
        with pytest.raises(NotImplementedError, match=rf"flash_attn_qkvpacked_func: head_dim={pair[0]} "):
            fai.flash_attn_qkvpacked_func(qkv)


@requires_hopper
@pytest.mark.parametrize("pair", FWD_ONLY_PAIRS, ids=FWD_ONLY_IDS)
def test_forward_only_flash_attn_varlen_func(pair):
    x = make_pair_varlen(*VARLEN_MIXES["unequal"], 6, 2, pair, BF16, seed=13)
    args = (x["cu_q"], x["cu_k"], x["max_q"], x["max_k"])
    leaves = [x[n].detach().clone().requires_grad_() for n in ("q", "k", "v")]
    name, value = _fai_argument(pair)
    spy = DashCallSpy()
    with spy, pytest.raises(NotImplementedError, match=rf"flash_attn_varlen_func: {name}={value} .*forward only"):
        fai.flash_attn_varlen_func(*leaves, *args, causal=True)
    assert spy.calls == [], "an op ran before the head-dim check"
    with torch.no_grad():
        out, lse = fai.flash_attn_varlen_func(*leaves, *args, causal=True, return_attn_probs=True)
    check_varlen_forward(x, out, lse, True, FULL)
    ops_out, ops_lse = run_varlen_fwd(x, True, FULL)
    assert torch.equal(out, ops_out) and torch.equal(lse, ops_lse)


# --- CPU ---------------------------------------------------------------------------------------------

def test_cpu_trait_table_is_consistent():
    """dash._traits (no library needed): every pair has a forward tile, backward pairs are
    forward pairs, and the new backward pairs this file tests thoroughly are in BWD_TILE."""
    assert len(set(_traits.HEAD_DIMS)) == len(_traits.HEAD_DIMS) > 0
    assert set(_traits.FWD_TILE) == set(_traits.HEAD_DIMS)
    assert set(_traits.BWD_TILE) <= set(_traits.HEAD_DIMS)
    for pair in _traits.HEAD_DIMS:
        assert len(pair) == 2 and all(isinstance(d, int) and d > 0 for d in pair), pair
    for tiles in (_traits.FWD_TILE, _traits.BWD_TILE):
        for pair, tile in tiles.items():
            assert len(tile) == 2 and all(isinstance(t, int) and t > 0 for t in tile), (pair, tile)
    assert set(_traits.BWD_SPLIT) == set(_traits.BWD_TILE)
    assert set(_traits.BWD_SPLIT.values()) <= {"kv_rows", "kv_cols"}
    assert set(_traits.BWD_ORDERS_BOTH_MODES) <= set(_traits.BWD_TILE)
    missing = [p for p in NEW_BWD_PAIRS if p not in _traits.BWD_TILE]
    assert not missing, f"NEW_BWD_PAIRS {missing} have no backward in the trait table"
    assert not set(UNSUPPORTED_PAIRS) & set(_traits.HEAD_DIMS)


@requires_library
def test_cpu_library_matches_trait_table():
    """The built library answers from the same table (a stale build fails here first)."""
    from dash import capabilities
    caps = capabilities.capabilities()["traits"]["head_dims"]
    assert all(isinstance(p, list) and len(p) == 2 for p in caps), \
        f"the op library predates head-dim pairs (head_dims {caps}): rebuild it ('make build')"
    assert capabilities.head_dim_pairs() == tuple(_traits.HEAD_DIMS), "stale op library: rebuild it ('make build')"
    assert capabilities.head_dims() == tuple(sorted({d for d, _ in _traits.HEAD_DIMS}))
    for pair in _traits.HEAD_DIMS:
        assert capabilities.supports(*pair)
        assert capabilities.fwd_tile_shape(*pair) == _traits.FWD_TILE[pair]
        assert capabilities.supports(*pair, backward=True) == (pair in _traits.BWD_TILE)
        if pair in _traits.BWD_TILE:
            assert capabilities.bwd_tile_shape(*pair) == _traits.BWD_TILE[pair]
            assert dash.bwd_tile_shape(*pair) == _traits.BWD_TILE[pair]
            assert dash.bwd_tile_shape(*pair, softcap=30.0) == _traits.BWD_SOFTCAP_TILE[pair]
        if pair[0] == pair[1]:
            assert capabilities.supports(pair[0]) and capabilities.fwd_tile_shape(pair[0]) == _traits.FWD_TILE[pair]
    splits = capabilities.capabilities()["traits"]["bwd_split"]
    assert splits == {_traits.head_dim_name(*p): s for p, s in _traits.BWD_SPLIT.items()}
    for pair in UNSUPPORTED_PAIRS:
        assert not capabilities.supports(*pair) and not capabilities.supports(*pair, backward=True)
    fwd_text, bwd_text = capabilities.describe_head_dims(), capabilities.describe_head_dims(backward=True)
    for head_dim, head_dim_v in _traits.HEAD_DIMS:
        assert (str(head_dim) if head_dim == head_dim_v else f"{head_dim} with head_dim_v {head_dim_v}") in fwd_text
    for head_dim, head_dim_v in _traits.BWD_TILE:
        assert (str(head_dim) if head_dim == head_dim_v else f"{head_dim} with head_dim_v {head_dim_v}") in bwd_text


def _cpu_inputs(pair, dtype=torch.bfloat16):
    """Valid CPU arguments of the four ops for a pair: fixed length (2 x 33 queries, 47 keys,
    GQA 4 / 2) and packed (3 sequences, one of length 1); out / dout with v's head dim."""
    head_dim, head_dim_v = pair
    gen = torch.Generator().manual_seed(0)

    def rand(*shape):
        return torch.randn(*shape, generator=gen).to(dtype)
    fixed = dict(q=rand(2, 33, 4, head_dim), k=rand(2, 47, 2, head_dim), v=rand(2, 47, 2, head_dim_v),
                 out=rand(2, 33, 4, head_dim_v), dout=rand(2, 33, 4, head_dim_v),
                 lse=torch.zeros(2, 4, 33, dtype=torch.float32))
    lengths_q, lengths_k = [5, 1, 7], [6, 3, 1]
    packed = dict(q=rand(13, 4, head_dim), k=rand(10, 2, head_dim), v=rand(10, 2, head_dim_v),
                  out=rand(13, 4, head_dim_v), dout=rand(13, 4, head_dim_v),
                  lse=torch.zeros(4, 13, dtype=torch.float32),
                  cu_q=torch.tensor([0, *itertools.accumulate(lengths_q)], dtype=torch.int32),
                  cu_k=torch.tensor([0, *itertools.accumulate(lengths_k)], dtype=torch.int32),
                  max_q=max(lengths_q), max_k=max(lengths_k))
    return fixed, packed


def _op_calls(fixed, packed, scale=0.125):
    """op name -> thunk calling the raw torch.ops.dash op on those arguments."""
    f, p = fixed, packed
    return {
        "attn_fwd": lambda: torch.ops.dash.attn_fwd(f["q"], f["k"], f["v"], scale, True),
        "attn_bwd": lambda: torch.ops.dash.attn_bwd(f["dout"], f["q"], f["k"], f["v"], f["out"], f["lse"], scale,
                                                    True, True),
        "attn_varlen_fwd": lambda: torch.ops.dash.attn_varlen_fwd(p["q"], p["k"], p["v"], p["cu_q"], p["cu_k"], None,
                                                                  None, p["max_q"], p["max_k"], scale, True),
        "attn_varlen_bwd": lambda: torch.ops.dash.attn_varlen_bwd(p["dout"], p["q"], p["k"], p["v"], p["out"],
                                                                  p["lse"], p["cu_q"], p["cu_k"], None, None,
                                                                  p["max_q"], p["max_k"], scale, True, True),
    }


OPS = ["attn_fwd", "attn_bwd", "attn_varlen_fwd", "attn_varlen_bwd"]
BWD_OPS = ["attn_bwd", "attn_varlen_bwd"]


@requires_library
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("pair", UNSUPPORTED_PAIRS, ids=[_pair_id(p) for p in UNSUPPORTED_PAIRS])
def test_cpu_unsupported_pair_raises_value_error(pair, op):
    """On CPU tensors, before the device check: ValueError naming the pair and listing the
    supported head dims."""
    from dash import capabilities
    fixed, packed = _cpu_inputs(pair)
    message = rf"dash\.{op}: {re.escape(_dims_text(pair))} is not supported; supported head dims are " \
              + re.escape(capabilities.describe_head_dims())
    with pytest.raises(ValueError, match=message):
        _op_calls(fixed, packed)[op]()


@requires_library
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("pair", FWD_PAIRS, ids=PAIR_IDS)
def test_cpu_supported_pairs_pass_the_checks(pair, op):
    """Every forward pair passes the forward ops' checks (the call gets as far as the "needs a
    CUDA device" error); the backward ops pass the pairs with a backward and raise
    NotImplementedError naming the head dims, before the device check, for the others."""
    from dash import capabilities
    fixed, packed = _cpu_inputs(pair)
    thunk = _op_calls(fixed, packed)[op]
    if op in BWD_OPS and pair not in _traits.BWD_TILE:
        with pytest.raises(NotImplementedError, match=rf"dash\.{op}: the backward for {_not_implemented(pair)}") as err:
            thunk()
        assert capabilities.describe_head_dims(backward=True) in str(err.value)
    else:
        with pytest.raises(RuntimeError, match="CUDA device") as err:
            thunk()
        assert not isinstance(err.value, NotImplementedError)


@requires_library
@pytest.mark.parametrize("pair", FWD_ONLY_PAIRS, ids=FWD_ONLY_IDS)
def test_cpu_forward_only_pairs_through_the_wrappers(pair):
    """dash.attn_bwd / dash.attn_varlen_bwd (default scale) and attn_varlen_bwd_plan (given v's
    head dim) raise NotImplementedError on CPU tensors too. (Every pair of today's table has a
    backward, so this runs for none until a forward-only entry is added.)"""
    fixed, packed = _cpu_inputs(pair)
    with pytest.raises(NotImplementedError, match=_not_implemented(pair)):
        dash.attn_bwd(fixed["dout"], fixed["q"], fixed["k"], fixed["v"], fixed["out"], fixed["lse"], causal=True)
    with pytest.raises(NotImplementedError, match=_not_implemented(pair)):
        dash.attn_varlen_bwd(packed["dout"], packed["q"], packed["k"], packed["v"], packed["out"], packed["lse"],
                             packed["cu_q"], packed["cu_k"], packed["max_q"], packed["max_k"])
    with pytest.raises(NotImplementedError, match=_not_implemented(pair)):
        dash.attn_varlen_bwd_plan(packed["q"], packed["k"], packed["cu_q"], packed["cu_k"], packed["max_q"],
                                  packed["max_k"], causal=True, deterministic=True, head_dim_v=pair[1])


@requires_library
@pytest.mark.parametrize("pair", BWD_PAIRS + UNSUPPORTED_PAIRS, ids=BWD_IDS + [_pair_id(p) for p in UNSUPPORTED_PAIRS])
def test_cpu_plans_take_head_dim_v(pair):
    """The plans take q and k, and v's head dim as head_dim_v (it picks the kernel): a pair
    with a backward gets as far as the "needs CUDA" error, an unsupported one raises
    ValueError naming both head dims."""
    fixed, packed = _cpu_inputs(pair)
    plans = [lambda: dash.attn_bwd_plan(fixed["q"], fixed["k"], causal=True, head_dim_v=pair[1]),
             lambda: dash.attn_varlen_bwd_plan(packed["q"], packed["k"], packed["cu_q"], packed["cu_k"],
                                               packed["max_q"], packed["max_k"], causal=True, head_dim_v=pair[1])]
    for plan in plans:
        if pair in _traits.BWD_TILE:
            with pytest.raises(RuntimeError, match="CUDA device"):
                plan()
        else:
            with pytest.raises(ValueError, match=re.escape(_dims_text(pair)) + " is not supported"):
                plan()


@requires_library
@pytest.mark.parametrize("pair", FWD_PAIRS, ids=PAIR_IDS)
def test_cpu_fakes(pair):
    """FakeTensorMode: out is q's shape with v's head dim (fixed and packed), lse fp32; the
    backward fakes give q's, k's, v's shapes for pairs with a backward and raise the ops'
    NotImplementedError for forward-only ones."""
    head_dim, head_dim_v = pair
    mode = FakeTensorMode()
    with mode:
        fixed = dict(q=torch.empty(2, 100, 4, head_dim, dtype=BF16), k=torch.empty(2, 260, 2, head_dim, dtype=BF16),
                     v=torch.empty(2, 260, 2, head_dim_v, dtype=BF16),
                     lse=torch.empty(2, 4, 100, dtype=torch.float32))
        packed = dict(q=torch.empty(50, 4, head_dim, dtype=FP16), k=torch.empty(70, 2, head_dim, dtype=FP16),
                      v=torch.empty(70, 2, head_dim_v, dtype=FP16), lse=torch.empty(4, 50, dtype=torch.float32),
                      cu_q=torch.empty(4, dtype=torch.int32), cu_k=torch.empty(4, dtype=torch.int32),
                      max_q=30, max_k=40)
        out, lse = torch.ops.dash.attn_fwd(fixed["q"], fixed["k"], fixed["v"], 0.125, True, window_left=37,
                                           window_right=0)
        assert out.shape == (2, 100, 4, head_dim_v) and out.dtype == BF16 and out.is_contiguous()
        assert lse.shape == (2, 4, 100) and lse.dtype == torch.float32
        fixed["out"], fixed["dout"] = out, torch.empty_like(out)
        vout, vlse = torch.ops.dash.attn_varlen_fwd(packed["q"], packed["k"], packed["v"], packed["cu_q"],
                                                    packed["cu_k"], None, None, 30, 40, 0.125, False)
        assert vout.shape == (50, 4, head_dim_v) and vout.dtype == FP16
        assert vlse.shape == (4, 50) and vlse.dtype == torch.float32
        packed["out"], packed["dout"] = vout, torch.empty_like(vout)
        calls = _op_calls(fixed, packed)
        for op in BWD_OPS:
            if pair in _traits.BWD_TILE:
                grads = calls[op]()
                inputs = fixed if op == "attn_bwd" else packed
                for name, grad in zip(("q", "k", "v"), grads):
                    assert grad.shape == inputs[name].shape and grad.dtype == inputs[name].dtype, (op, name)
            else:
                message = rf"dash\.{op}: the backward for {_not_implemented(pair)}"
                with pytest.raises(NotImplementedError, match=message):
                    calls[op]()


@requires_library
@pytest.mark.parametrize("pair", UNSUPPORTED_PAIRS, ids=[_pair_id(p) for p in UNSUPPORTED_PAIRS])
def test_cpu_fakes_reject_unsupported_pairs(pair):
    head_dim, head_dim_v = pair
    mode = FakeTensorMode()
    with mode:
        q = torch.empty(2, 100, 4, head_dim, dtype=BF16)
        k = torch.empty(2, 260, 2, head_dim, dtype=BF16)
        v = torch.empty(2, 260, 2, head_dim_v, dtype=BF16)
        with pytest.raises(ValueError, match=rf"dash\.attn_fwd: {re.escape(_dims_text(pair))} is not supported"):
            torch.ops.dash.attn_fwd(q, k, v, 0.125, False)
        cu = torch.empty(3, dtype=torch.int32)
        with pytest.raises(ValueError, match=rf"dash\.attn_varlen_fwd: {re.escape(_dims_text(pair))} is not supported"):
            torch.ops.dash.attn_varlen_fwd(q[0], k[0], v[0], cu, cu, None, None, 60, 60, 0.125, False)


@requires_library
@pytest.mark.parametrize("pair", FWD_ONLY_PAIRS, ids=FWD_ONLY_IDS)
def test_cpu_flash_attn_interface_forward_only(pair):
    """Inputs that require grad: NotImplementedError naming head_dim (head_dim_v when v's
    differs) before any op is reached (the CPU op would raise "CUDA device"; the reference
    test doubles record no call). Under torch.no_grad the call reaches the op; through the
    reference doubles it returns out with v's head dim."""
    fixed, packed = _cpu_inputs(pair)
    name, value = _fai_argument(pair)
    q, k, v = (fixed[n].requires_grad_() for n in ("q", "k", "v"))
    with reference_kernels() as calls:
        with pytest.raises(NotImplementedError, match=rf"flash_attn_func: {name}={value} .*forward only"):
            fai.flash_attn_func(q, k, v, causal=True)
        assert calls == [], "an op ran before the head-dim check"
        with torch.no_grad():
            out = fai.flash_attn_func(q, k, v, causal=True)
        assert [c.op for c in calls] == ["attn_fwd"]
    assert out.shape == (*q.shape[:-1], pair[1])
    ref_out, _ = reference.attention_forward(q.detach(), k.detach(), v.detach(), causal=True)
    torch.testing.assert_close(out, ref_out)  # the doubles compute the reference (scale rounding aside)
    pq, pk, pv = (packed[n].requires_grad_() for n in ("q", "k", "v"))
    vargs = (packed["cu_q"], packed["cu_k"], packed["max_q"], packed["max_k"])
    with pytest.raises(NotImplementedError, match=rf"flash_attn_varlen_func: {name}={value} .*forward only"):
        fai.flash_attn_varlen_func(pq, pk, pv, *vargs)
    with torch.no_grad(), pytest.raises(RuntimeError, match="CUDA device"):
        fai.flash_attn_varlen_func(pq, pk, pv, *vargs)
    with pytest.raises(RuntimeError, match="CUDA device"):  # inputs that do not require grad
        fai.flash_attn_func(*(t.detach() for t in (q, k, v)))


@requires_library
@pytest.mark.parametrize("pair", UNSUPPORTED_PAIRS, ids=[_pair_id(p) for p in UNSUPPORTED_PAIRS])
def test_cpu_flash_attn_interface_unsupported_pairs(pair):
    """NotImplementedError (FlashAttention-3's signal for what dash lacks) naming head_dim_v
    when q's head dim is supported with another v, else head_dim."""
    from dash import capabilities
    fixed, _ = _cpu_inputs(pair)
    head_dim, head_dim_v = pair
    name, value = (("head_dim_v", head_dim_v) if head_dim in capabilities.head_dims() else ("head_dim", head_dim))
    with pytest.raises(NotImplementedError, match=rf"flash_attn_func: {name}={value} is not supported"):
        fai.flash_attn_func(fixed["q"], fixed["k"], fixed["v"])
