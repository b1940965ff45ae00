"""GPU: sliding windows (FlashAttention-3's window_size = (left, right), bottom-right aligned:
query i sees key j iff i + shift - left <= j <= i + shift + right, shift = seqlen_k -
seqlen_q, a negative bound unbounded, causal=True setting right = 0).

Forward (out, lse) and backward (dq, dk, dv) against an fp64 reference with FlashAttention's
tolerances for causal, (0, 0), Mistral-style (W, 0), symmetric, asymmetric, one-sided and
over-wide windows, W not a tile multiple, both head dims and dtypes, odd lengths and
seqlen_q != seqlen_k both ways, GQA / MQA, outputs poisoned with NaN first; rows that see no
key (out 0, lse -inf, dq 0) and keys no query sees (dk = dv = 0); windows that normalize to
no window or to causal give bitwise the same result; packed batches (empty sequences, odd
and unequal lengths, GQA, seqused); 50-repeat bitwise reproducibility and the recorded dQ
accumulation order (diagonal: KV tiles n_block_end(m) - 1 down to n_block_begin(m);
ascending / descending / fa3_baseline: n_block_begin(m) up to n_block_end(m) - 1) for fixed
and packed calls; what attn_bwd_plan picks; flash_attn_interface (public and private entry
points) with autograd; windows with softcap; torch.library.opcheck of the ops with window
arguments."""
import itertools

import pytest
import torch

import dash
from conftest import requires_hopper
from dash import flash_attn_interface as fai
from dash import reference
from dash._traits import BWD_TILE
from dash.geometry import SeqGeometry, SeqTiles, make_mask_window
from band_helpers import (MIXES, NO_KEY, VARLEN_MASKS, assert_bitwise_repeats, assert_varlen_bitwise_repeats,
                          check_lse, make_qkv, make_varlen, run_bwd, run_fwd, varlen_bwd, varlen_case, varlen_fwd,
                          varlen_visibility, visibility)
from gpu_helpers import assert_close_fa_style

pytestmark = requires_hopper

BF16, FP16 = torch.bfloat16, torch.float16


# --- helpers ------------------------------------------------------------------------------------

def reference_out_lse(q, k, v, causal, window, softmax_scale=None, softcap=0.0):
    """The fp32 reference forward in q's dtype: what the backward tests feed attn_bwd."""
    return reference.attention_forward(q, k, v, softmax_scale, causal, compute_dtype=torch.float32,
                                       window_size=window, softcap=softcap)


def check_forward(q, k, v, out, lse, causal, window, softmax_scale=None, softcap=0.0):
    dtype = q.dtype
    ref_out, ref_lse = reference.attention_forward(q.double(), k.double(), v.double(), softmax_scale, causal,
                                                   compute_dtype=torch.float64, window_size=window, softcap=softcap)
    pt_out, _ = reference.attention_forward(q, k, v, softmax_scale, causal, compute_dtype=dtype, window_size=window,
                                            softcap=softcap)
    assert out.shape == q.shape and out.dtype == dtype and out.is_contiguous()
    assert_close_fa_style("out", out, ref_out, pt_out, dtype)
    check_lse(lse, ref_lse)
    rows_see, _ = visibility(q.shape[1], k.shape[1], causal, window)
    if (~rows_see).any():
        assert out[:, ~rows_see].abs().max() == 0, "rows that see no key must get out 0"
        assert torch.isneginf(lse[:, :, ~rows_see]).all(), "rows that see no key must get lse -inf"


def check_backward(dout, q, k, v, grads, causal, window, softmax_scale=None, softcap=0.0):
    dtype = q.dtype
    ref = reference.attention_backward(dout, q, k, v, softmax_scale, causal, compute_dtype=torch.float64,
                                       window_size=window, softcap=softcap)
    pt = reference.attention_backward(dout, q, k, v, softmax_scale, causal, compute_dtype=dtype, window_size=window,
                                      softcap=softcap)
    for name, ours, r, p in zip(("dq", "dk", "dv"), grads, ref, pt):
        assert ours.shape == r.shape and ours.dtype == dtype, name
        assert_close_fa_style(name, ours, r, p, dtype)
    rows_see, keys_seen = visibility(q.shape[1], k.shape[1], causal, window)
    if (~rows_see).any():
        assert grads[0][:, ~rows_see].abs().max() == 0, "rows that see no key must get dq 0"
    if (~keys_seen).any():
        assert grads[1][:, ~keys_seen].abs().max() == 0, "keys no query sees must get dk 0"
        assert grads[2][:, ~keys_seen].abs().max() == 0, "keys no query sees must get dv 0"


def fwd_bwd_and_check(q, k, v, dout, causal, window, deterministic, **kw):
    out, lse = run_fwd(q, k, v, causal, window, **kw)
    check_forward(q, k, v, out, lse, causal, window)
    ref_out, ref_lse = reference_out_lse(q, k, v, causal, window)
    grads = run_bwd(dout, q, k, v, ref_out, ref_lse, causal, window, deterministic=deterministic, **kw)
    check_backward(dout, q, k, v, grads, causal, window)
    return out, lse, grads


def _ids(masks):
    return [f"{'causal' if c else 'nc'}-{w[0]}_{w[1]}" for c, w in masks]


# --- fixed length: against the fp64 reference ----------------------------------------------------

# (causal, window): W = 1, 63, 100, 257, 1000 (none a tile multiple), windows wider than the
# sequences (normalized to no window / causal), one-sided and asymmetric bands.
MASKS = [
    (True, (-1, -1)),      # causal
    (False, (-1, 0)),      # FlashAttention-3's causal window
    (False, (0, 0)),       # the diagonal only
    (True, (1, 0)),        # Mistral-style (W, 0)
    (True, (100, 0)),
    (True, (257, 257)),    # causal sets right = 0
    (False, (63, 63)),     # HF transformers' (W, W)
    (False, (1000, 1000)),
    (False, (1, 257)),     # asymmetric
    (False, (257, 1)),
    (False, (-1, 63)),     # right bound only
    (False, (100, -1)),    # left bound only
    (False, (0, 1000)),
    (False, (5000, 5000)),  # wider than every sequence: no window
    (True, (5000, -1)),    # wider than every sequence: causal
]
SEQLENS = [(1, 1), (17, 17), (113, 113), (1000, 1000), (113, 203), (203, 113), (1, 300), (300, 1)]


@pytest.mark.parametrize("seqlen_q,seqlen_k", SEQLENS)
@pytest.mark.parametrize("causal,window", MASKS, ids=_ids(MASKS))
def test_matches_reference(causal, window, seqlen_q, seqlen_k):
    """Every mask at every length; head dim, dtype and backward mode rotate so that each
    mask meets all four (head dim, dtype) pairs in both modes."""
    i, j = MASKS.index((causal, window)), SEQLENS.index((seqlen_q, seqlen_k))
    head_dim = (64, 128)[(i + j) % 2]
    dtype = (BF16, FP16)[(i + j) // 2 % 2]
    deterministic = (i + j) // 4 % 2 == 0
    q, k, v, dout = make_qkv(2, seqlen_q, seqlen_k, 3, head_dim, dtype, seed=100 * i + j)
    fwd_bwd_and_check(q, k, v, dout, causal, window, deterministic)


LONG = [  # batch, heads, seqlen_q, seqlen_k, head_dim, dtype, causal, window
    (1, 2, 4097, 4097, 128, BF16, True, (1000, 0)),
    (1, 2, 2049, 2049, 64, FP16, False, (257, 257)),
    (1, 2, 4097, 1000, 64, BF16, False, (100, 63)),
    (1, 2, 1000, 4097, 128, FP16, False, (-1, 257)),
    (2, 2, 2049, 2049, 128, BF16, True, (63, -1)),
    (1, 2, 2049, 3000, 64, BF16, False, (0, 1000)),
]


@pytest.mark.parametrize("batch,heads,seqlen_q,seqlen_k,head_dim,dtype,causal,window", LONG)
def test_long_sequences(batch, heads, seqlen_q, seqlen_k, head_dim, dtype, causal, window):
    """Many tiles inside and outside the band, both backward modes."""
    q, k, v, dout = make_qkv(batch, seqlen_q, seqlen_k, heads, head_dim, dtype, seed=seqlen_q + seqlen_k)
    _, _, grads = fwd_bwd_and_check(q, k, v, dout, causal, window, deterministic=True)
    ref_out, ref_lse = reference_out_lse(q, k, v, causal, window)
    check_backward(dout, q, k, v, run_bwd(dout, q, k, v, ref_out, ref_lse, causal, window, deterministic=False),
                   causal, window)


GQA_MASKS = [(True, (100, 0)), (False, (63, 63)), (False, (1, 257)), (False, (0, 0)), (False, (-1, 63))]
GQA_LENGTHS = [(113, 203), (1000, 1000), (203, 113), (777, 777), (1, 300)]


@pytest.mark.parametrize("heads,heads_kv", [(8, 2), (8, 1)], ids=["gqa", "mqa"])
@pytest.mark.parametrize("causal,window", GQA_MASKS, ids=_ids(GQA_MASKS))
@pytest.mark.parametrize("head_dim", [64, 128])
def test_gqa_mqa(head_dim, causal, window, heads, heads_kv):
    i = GQA_MASKS.index((causal, window))
    seqlen_q, seqlen_k = GQA_LENGTHS[(i + heads_kv + head_dim // 64) % len(GQA_LENGTHS)]
    dtype = (BF16, FP16)[(i + heads_kv) % 2]
    q, k, v, dout = make_qkv(2, seqlen_q, seqlen_k, heads, head_dim, dtype, heads_kv=heads_kv, seed=i + heads_kv)
    _, _, grads = fwd_bwd_and_check(q, k, v, dout, causal, window, deterministic=(i + head_dim // 64) % 2 == 0)
    assert grads[1].shape == k.shape and grads[2].shape == v.shape


def test_softmax_scale():
    q, k, v, dout = make_qkv(2, 300, 500, 4, 128, BF16, heads_kv=2, seed=5)
    out, lse = run_fwd(q, k, v, False, (63, 100), softmax_scale=0.37)
    check_forward(q, k, v, out, lse, False, (63, 100), softmax_scale=0.37)
    ref_out, ref_lse = reference_out_lse(q, k, v, False, (63, 100), softmax_scale=0.37)
    grads = run_bwd(dout, q, k, v, ref_out, ref_lse, False, (63, 100), softmax_scale=0.37, deterministic=True)
    check_backward(dout, q, k, v, grads, False, (63, 100), softmax_scale=0.37)


# --- rows that see no key, keys that no query sees ---------------------------------------------

# NO_KEY (band_helpers): (seqlen_q, seqlen_k, causal, window, what is empty)


@pytest.mark.parametrize("seqlen_q,seqlen_k,causal,window,empty", NO_KEY)
@pytest.mark.parametrize("head_dim", [64, 128])
def test_rows_without_keys_and_keys_without_rows(head_dim, seqlen_q, seqlen_k, causal, window, empty):
    """Out 0, lse -inf and dq 0 exactly for rows that see no key; dk = dv = 0 exactly for
    keys no query sees (outputs start as NaN, so a skipped tile would show); both modes."""
    rows_see, keys_seen = visibility(seqlen_q, seqlen_k, causal, window)
    assert (~(rows_see if empty == "rows" else keys_seen)).any(), "the case must have empty rows / keys"
    q, k, v, dout = make_qkv(2, seqlen_q, seqlen_k, 4, head_dim, BF16, heads_kv=2, seed=seqlen_q)
    for deterministic in (True, False):
        fwd_bwd_and_check(q, k, v, dout, causal, window, deterministic)


EQUIVALENT = [  # two (causal, window) that normalize to the same band
    ((False, (-1, 0)), (True, (-1, -1))),
    ((False, (5000, 5000)), (False, (-1, -1))),
    ((True, (5000, 7)), (True, (-1, -1))),
    ((True, (63, 63)), (False, (63, 0))),
    ((True, (63, -1)), (False, (63, 0))),
]


@pytest.mark.parametrize("first,second", EQUIVALENT, ids=[f"{a}={b}" for a, b in EQUIVALENT])
@pytest.mark.parametrize("seqlen_q,seqlen_k", [(1000, 1000), (700, 1500)])
def test_equivalent_windows_are_bitwise_equal(first, second, seqlen_q, seqlen_k):
    """FlashAttention-3's normalization: causal sets right = 0, a bound covering the whole
    sequence is unbounded; equal bands run the same kernels and schedule."""
    q, k, v, dout = make_qkv(2, seqlen_q, seqlen_k, 4, 128, BF16, seed=13)
    results = []
    for causal, window in (first, second):
        out, lse = run_fwd(q, k, v, causal, window)
        grads = run_bwd(dout, q, k, v, out, lse, causal, window, deterministic=True)
        results.append((out, lse, *grads))
    for name, a, b in zip(("out", "lse", "dq", "dk", "dv"), *results):
        assert torch.equal(a, b), f"{name}: {first} and {second} differ"
    check_forward(q, k, v, results[0][0], results[0][1], *first)


def test_bounds_at_the_normalization_threshold():
    """left = seqlen_k - 1 and right = seqlen_q - 1 cover everything (no window); one less
    hides the corner keys, which the reference agrees with."""
    seqlen_q, seqlen_k = 300, 500
    q, k, v, dout = make_qkv(1, seqlen_q, seqlen_k, 2, 64, BF16, seed=17)
    full = run_fwd(q, k, v, False, (-1, -1))
    edge = run_fwd(q, k, v, False, (seqlen_k - 1, seqlen_q - 1))
    assert torch.equal(full[0], edge[0]) and torch.equal(full[1], edge[1])
    for window in ((seqlen_k - 2, -1), (-1, seqlen_q - 2), (seqlen_k - 2, seqlen_q - 2)):
        fwd_bwd_and_check(q, k, v, dout, False, window, deterministic=True)


# --- packed (variable-length) batches ------------------------------------------------------

# MIXES, VARLEN_MASKS and varlen_case: band_helpers.


def check_varlen(x, out, lse, grads, causal, window, **ref_kw):
    dtype = x["q"].dtype
    args = (x["q"], x["k"], x["v"], x["cu_q"], x["cu_k"])
    rows_see, keys_seen = varlen_visibility(x, causal, window, **ref_kw)
    if out is not None:
        ref_out, ref_lse = reference.attention_varlen_forward(*args, causal=causal, compute_dtype=torch.float64,
                                                              window_size=window, **ref_kw)
        pt_out, _ = reference.attention_varlen_forward(*args, causal=causal, compute_dtype=dtype,
                                                       window_size=window, **ref_kw)
        assert_close_fa_style("out", out, ref_out.double(), pt_out, dtype)
        check_lse(lse, ref_lse)
        assert torch.equal(torch.isneginf(ref_lse).all(0), ~rows_see)
        if (~rows_see).any():
            assert out[~rows_see].abs().max() == 0, "rows that see no key (or unused rows) must get out 0"
    ref = reference.attention_varlen_backward(x["dout"], *args, causal=causal, window_size=window, **ref_kw)
    pt = reference.attention_varlen_backward(x["dout"], *args, causal=causal, compute_dtype=dtype,
                                             window_size=window, **ref_kw)
    for name, ours, r, p, seen in zip(("dq", "dk", "dv"), grads, ref, pt, (rows_see, keys_seen, keys_seen)):
        assert ours.shape == r.shape and ours.dtype == dtype
        assert_close_fa_style(name, ours, r, p, dtype)
        if (~seen).any():
            assert ours[~seen].abs().max() == 0, f"{name}: rows / keys outside every window must get 0"


@pytest.mark.parametrize("causal,window", VARLEN_MASKS, ids=_ids(VARLEN_MASKS))
@pytest.mark.parametrize("mix", sorted(MIXES))
@pytest.mark.parametrize("head_dim", [64, 128])
def test_varlen_matches_reference(head_dim, mix, causal, window):
    i = VARLEN_MASKS.index((causal, window))
    heads, heads_kv, dtype, seed = varlen_case(mix, causal, window, head_dim)
    x = make_varlen(*MIXES[mix], heads, heads_kv, head_dim, dtype, seed=seed)
    out, lse = varlen_fwd(x, causal, window)
    assert lse.shape == (heads, x["q"].shape[0])
    ref_out, ref_lse = reference.attention_varlen_forward(x["q"], x["k"], x["v"], x["cu_q"], x["cu_k"],
                                                          causal=causal, window_size=window)
    grads = varlen_bwd(x, ref_out, ref_lse, causal, window, deterministic=(i + len(mix)) % 2 == 0)
    check_varlen(x, out, lse, grads, causal, window)


@pytest.mark.parametrize("schedule", ["diagonal", "descending", "ascending"])
def test_varlen_schedules_match_reference(schedule):
    x = make_varlen(*MIXES["unequal"], 4, 2, 128, BF16, seed=21)
    ref_out, ref_lse = reference.attention_varlen_forward(x["q"], x["k"], x["v"], x["cu_q"], x["cu_k"],
                                                          window_size=(63, 100))
    for deterministic in (True, False):
        grads = varlen_bwd(x, ref_out, ref_lse, False, (63, 100), deterministic, schedule=schedule)
        check_varlen(x, None, None, grads, False, (63, 100))


def test_varlen_seqused_with_window():
    x = make_varlen([300, 129, 64], [256, 200, 64], 4, 2, 128, BF16, seed=5)
    used_q = torch.tensor([250, 1, 0], dtype=torch.int32, device="cuda")
    used_k = torch.tensor([256, 100, 10], dtype=torch.int32, device="cuda")
    kw = dict(seqused_q=used_q.tolist(), seqused_k=used_k.tolist())
    out, lse = varlen_fwd(x, True, (50, 0), seqused_q=used_q, seqused_k=used_k)
    assert out[250:300].abs().max() == 0 and torch.isneginf(lse[:, 250:300]).all()
    ref_out, ref_lse = reference.attention_varlen_forward(x["q"], x["k"], x["v"], x["cu_q"], x["cu_k"], causal=True,
                                                          window_size=(50, 0), **kw)
    grads = varlen_bwd(x, ref_out, ref_lse, True, (50, 0), True, seqused_q=used_q, seqused_k=used_k)
    check_varlen(x, out, lse, grads, True, (50, 0), **kw)


def test_varlen_empty_batches_with_window():
    x = make_varlen([0, 0], [5, 0], 2, 2, 64, BF16)
    out, lse = varlen_fwd(x, False, (3, 3))
    assert out.shape == (0, 2, 64) and lse.shape == (2, 0)
    x = make_varlen([3, 4], [0, 0], 2, 1, 64, BF16)
    out, lse = varlen_fwd(x, True, (3, 0))
    assert out.abs().max() == 0 and torch.isneginf(lse).all()
    grads = varlen_bwd(x, out, lse, True, (3, 0), True)
    assert grads[0].abs().max() == 0 and grads[1].numel() == 0


# --- determinism and the recorded dQ order ---------------------------------------------------

REPEATS = 50


def expected_order(tiles: SeqTiles, m_block: int, schedule: str) -> list[int]:
    begin, end = tiles.n_block_begin(m_block), tiles.n_block_end(m_block)
    if schedule == "diagonal":
        return list(range(end - 1, begin - 1, -1))
    return list(range(begin, end))  # ascending, descending and fa3_baseline add in KV tile order


BITWISE_FIXED = [  # batch, heads, heads_kv, seqlen_q, seqlen_k, head_dim, causal, window
    (2, 8, 8, 2048, 2048, 128, True, (257, 0)),
    (1, 16, 4, 4097, 1000, 64, False, (100, 63)),
]


@pytest.mark.parametrize("batch,heads,heads_kv,seqlen_q,seqlen_k,head_dim,causal,window", BITWISE_FIXED)
def test_bitwise_reproducible(batch, heads, heads_kv, seqlen_q, seqlen_k, head_dim, causal, window):
    q, k, v, dout = make_qkv(batch, seqlen_q, seqlen_k, heads, head_dim, BF16, heads_kv=heads_kv, seed=3)
    assert_bitwise_repeats(dout, q, k, v, causal, window, REPEATS)


TRACE_FIXED = [  # (batch, heads, heads_kv, seqlen_q, seqlen_k, head_dim), causal, window, schedule, sm_margin
    ((2, 8, 8, 2048, 2048, 128), True, (257, 0), "auto", 0),
    ((2, 8, 8, 2048, 2048, 128), True, (257, 0), "auto", 100),        # a small grid: several rounds
    ((2, 8, 2, 2048, 2048, 64), False, (100, 100), "auto", 0),
    ((1, 4, 4, 4097, 1000, 128), False, (63, 257), "auto", 0),        # seqlen_q > seqlen_k
    ((1, 4, 1, 1000, 4097, 64), False, (-1, 1), "auto", 0),           # right bound only, MQA
    ((1, 4, 4, 1000, 4097, 64), False, (1000, -1), "auto", 0),        # left bound only
    ((2, 3, 3, 113, 1000, 128), False, (0, 0), "auto", 0),            # Q tiles / keys outside the band
    ((1, 6, 6, 3000, 3000, 128), True, (1000, 0), "auto", 0),
    ((2, 8, 8, 2048, 2048, 128), True, (257, 0), "diagonal", 0),
    ((2, 8, 8, 2048, 2048, 128), True, (257, 0), "descending", 0),
    ((2, 8, 8, 2048, 2048, 128), True, (257, 0), "ascending", 0),
    ((1, 4, 4, 4097, 1000, 64), False, (63, 257), "descending", 0),
    ((1, 4, 4, 4097, 1000, 64), False, (63, 257), "ascending", 0),
    ((2, 8, 8, 2048, 2048, 128), False, (100, 100), "fa3_baseline", 0),
]


def _trace_fixed(q, k, v, dout, out, lse, causal, window, deterministic, **kw):
    b, sq, h, d = q.shape
    trace, count = dash.trace_buffers(b, h, sq, k.shape[1], d, device="cuda", head_dim_v=v.shape[-1])
    grads = run_bwd(dout, q, k, v, out, lse, causal, window, deterministic=deterministic, dq_trace=trace,
                    dq_trace_count=count, **kw)
    return grads, trace.cpu(), count.cpu()


@pytest.mark.parametrize("shape,causal,window,schedule,sm_margin", TRACE_FIXED)
def test_recorded_order_fixed_length(shape, causal, window, schedule, sm_margin):
    """The ordered path runs: every dQ tile's recorded KV tiles are exactly its band's, in
    the schedule's order; the traced run is bitwise the untraced one and correct."""
    batch, heads, heads_kv, seqlen_q, seqlen_k, head_dim = shape
    q, k, v, dout = make_qkv(batch, seqlen_q, seqlen_k, heads, head_dim, BF16, heads_kv=heads_kv, seed=4)
    plan = dash.attn_bwd_plan(q, k, causal=causal, deterministic=True, schedule=schedule, sm_margin=sm_margin,
                              window_size=window)
    planned = "diagonal" if schedule == "auto" else schedule
    assert plan["schedule"] == planned, plan
    out, lse = reference_out_lse(q, k, v, causal, window)
    grads, trace, count = _trace_fixed(q, k, v, dout, out, lse, causal, window, True, schedule=schedule,
                                       sm_margin=sm_margin)
    plain = run_bwd(dout, q, k, v, out, lse, causal, window, deterministic=True, schedule=schedule,
                    sm_margin=sm_margin)
    assert all(torch.equal(a, b) for a, b in zip(grads, plain)), "the trace changed the result"
    block_m, block_n = dash.bwd_tile_shape(head_dim)
    tiles = SeqTiles(seqlen_q, seqlen_k, block_m, block_n, make_mask_window(causal, *window, seqlen_q, seqlen_k))
    assert trace.shape[2] == tiles.num_m_blocks()
    for m in range(tiles.num_m_blocks()):
        want = expected_order(tiles, m, planned)
        for bb in range(batch):
            for hh in range(heads):
                got = trace[bb, hh, m, : count[bb, hh, m]].tolist()
                assert got == want, f"dQ tile {(bb, hh, m)} ({planned}): order {got}, want {want}"
    check_backward(dout, q, k, v, grads, causal, window)


def test_nondeterministic_mode_adds_every_partial_once():
    q, k, v, dout = make_qkv(2, 2048, 2048, 8, 128, BF16, seed=7)
    causal, window = False, (257, 100)
    out, lse = reference_out_lse(q, k, v, causal, window)
    _, trace, count = _trace_fixed(q, k, v, dout, out, lse, causal, window, False)
    block_m, block_n = dash.bwd_tile_shape(128)
    tiles = SeqTiles(2048, 2048, block_m, block_n, make_mask_window(causal, *window, 2048, 2048))
    for m in range(tiles.num_m_blocks()):
        want = expected_order(tiles, m, "ascending")
        for bb, hh in itertools.product(range(2), range(8)):
            assert sorted(trace[bb, hh, m, : count[bb, hh, m]].tolist()) == want


BITWISE_PACKED = [  # lengths q, lengths k, heads, heads_kv, head_dim, causal, window
    ([4096, 17, 1, 2048, 6000, 129, 0, 4093], None, 16, 4, 128, True, (1000, 0)),
    ([3000, 1, 700, 5000, 129, 2100], [2000, 5, 1500, 5000, 0, 2500], 8, 2, 64, False, (63, 257)),
]


@pytest.mark.parametrize("lengths_q,lengths_k,heads,heads_kv,head_dim,causal,window", BITWISE_PACKED)
def test_varlen_bitwise_reproducible(lengths_q, lengths_k, heads, heads_kv, head_dim, causal, window):
    x = make_varlen(lengths_q, lengths_k, heads, heads_kv, head_dim, BF16, seed=9)
    out, lse = varlen_fwd(x, causal, window)
    assert_varlen_bitwise_repeats(x, out, lse, causal, window, REPEATS)


TRACE_PACKED = [  # lengths q, lengths k, heads, heads_kv, head_dim, causal, window, schedule
    ([4096, 17, 1, 2048, 6000, 129, 0, 4093], None, 16, 4, 128, True, (1000, 0), "auto"),
    ([3000, 1, 700, 5000, 129, 2100], [2000, 5, 1500, 5000, 0, 2500], 8, 2, 64, False, (63, 257), "auto"),
    ([3000, 1, 700, 5000, 129, 2100], [2000, 5, 1500, 5000, 0, 2500], 8, 2, 64, False, (63, 257), "descending"),
    ([3000, 1, 700, 5000, 129, 2100], [2000, 5, 1500, 5000, 0, 2500], 8, 2, 64, False, (63, 257), "ascending"),
    ([3000, 1, 700, 5000, 129, 2100], [2000, 5, 1500, 5000, 0, 2500], 8, 2, 64, False, (63, 257), "diagonal"),
    ([300, 1, 2049, 0, 64, 1000, 17], None, 4, 4, 128, False, (0, 0), "auto"),
    ([200, 0, 1, 777, 128], [500, 3, 0, 640, 1], 4, 1, 64, False, (-1, 100), "auto"),
]


@pytest.mark.parametrize("lengths_q,lengths_k,heads,heads_kv,head_dim,causal,window,schedule", TRACE_PACKED)
def test_recorded_order_packed(lengths_q, lengths_k, heads, heads_kv, head_dim, causal, window, schedule):
    x = make_varlen(lengths_q, lengths_k, heads, heads_kv, head_dim, BF16, seed=9)
    planned = "diagonal" if schedule == "auto" else schedule
    plan = dash.attn_varlen_bwd_plan(x["q"], x["k"], x["cu_q"], x["cu_k"], x["max_q"], x["max_k"], causal, True,
                                     schedule, window_size=window)
    assert plan["schedule"] == planned and "variable-length" in plan["reason"], plan
    out, lse = reference.attention_varlen_forward(x["q"], x["k"], x["v"], x["cu_q"], x["cu_k"], causal=causal,
                                                  window_size=window)
    cu_q, cu_k = x["cu_q"].tolist(), x["cu_k"].tolist()
    trace, count = dash.varlen_trace_buffers(heads, cu_q, x["max_q"], x["max_k"], head_dim, "cuda")
    grads = varlen_bwd(x, out, lse, causal, window, True, schedule=schedule, dq_trace=trace, dq_trace_count=count)
    plain = varlen_bwd(x, out, lse, causal, window, True, schedule=schedule)
    assert all(torch.equal(a, b) for a, b in zip(grads, plain)), "the trace changed the result"
    trace, count = trace.cpu(), count.cpu()
    block_m, block_n = dash.bwd_tile_shape(head_dim)
    geo = SeqGeometry.packed(heads, heads_kv, cu_q, cu_k, x["max_q"], x["max_k"], block_m)
    mask = make_mask_window(causal, *window, x["max_q"], x["max_k"])  # packed: against the longest
    total = 0
    for b in range(geo.batch):
        seq = geo.seq(b)
        tiles = SeqTiles(seq.len_q, seq.len_k, block_m, block_n, mask)
        for h in range(heads):
            for m in range(tiles.num_m_blocks()):
                t = geo.dq_tile(seq, h, m)
                want = expected_order(tiles, m, planned)
                got = trace[t, : count[t]].tolist()
                assert got == want, f"sequence {b} head {h} Q tile {m} ({planned}): order {got}, want {want}"
                total += len(want)
    assert int(count.sum()) == total, "partials added into tiles outside the sequences' bands"
    check_varlen(x, None, None, grads, causal, window)


# --- the plan ----------------------------------------------------------------------------------

def test_plan_picks_diagonal_for_windows():
    q = torch.empty(2, 2048, 8, 128, device="cuda", dtype=BF16)
    short = torch.empty(2, 700, 8, 128, device="cuda", dtype=BF16)
    for qq, kk in ((q, q), (short, q), (q, short)):
        for causal, window in [(True, (257, 0)), (False, (100, 100)), (False, (0, 0)), (False, (-1, 5)),
                               (False, (5, -1)), (True, (1, 3))]:
            plan = dash.attn_bwd_plan(qq, kk, causal=causal, deterministic=True, window_size=window)
            assert plan["schedule"] == "diagonal" and "sliding window" in plan["reason"], (causal, window, plan)
        # windows that normalize to no window / causal plan as those
        for causal, window, same in [(False, (5000, 5000), False), (False, (-1, 0), True), (True, (4096, 9), True)]:
            assert (dash.attn_bwd_plan(qq, kk, causal=causal, deterministic=True, window_size=window)
                    == dash.attn_bwd_plan(qq, kk, causal=same, deterministic=True))
    for schedule, reason in (("shift", "full mask"), ("symmetric_shift", "without a window")):
        plan = dash.attn_bwd_plan(q, q, causal=False, deterministic=True, schedule=schedule, window_size=(63, 63))
        assert plan["schedule"] == "diagonal" and reason in plan["reason"], plan
    for schedule in ("ascending", "descending", "fa3_baseline", "diagonal"):
        plan = dash.attn_bwd_plan(q, q, causal=True, deterministic=True, schedule=schedule, window_size=(63, 0))
        assert plan["schedule"] == schedule and plan["reason"] == "requested", plan
    plan = dash.attn_bwd_plan(q, q, causal=False, deterministic=True, schedule="diagonal")
    assert plan["schedule"] != "diagonal" and "window" in plan["reason"]


def test_varlen_plan_picks_diagonal_for_windows():
    x = make_varlen([300, 1, 2049, 0, 64], None, 4, 2, 128, BF16)
    args = (x["q"], x["k"], x["cu_q"], x["cu_k"], x["max_q"], x["max_k"])
    for causal, window in [(True, (100, 0)), (False, (0, 0)), (False, (63, 257)), (False, (-1, 1))]:
        plan = dash.attn_varlen_bwd_plan(*args, causal, True, window_size=window)
        assert plan["schedule"] == "diagonal", plan
    assert dash.attn_varlen_bwd_plan(*args, False, True, window_size=(5000, 5000))["schedule"] == "ascending"


# --- flash_attn_interface ------------------------------------------------------------------

FAI_MASKS = [(True, (100, 0)), (False, (63, 257)), (False, (0, 0)), (False, (-1, 1))]


@pytest.mark.parametrize("causal,window", FAI_MASKS, ids=_ids(FAI_MASKS))
@pytest.mark.parametrize("head_dim", sorted(d for d, d_v in BWD_TILE if d == d_v))
def test_flash_attn_func_autograd(head_dim, causal, window):
    """flash_attn_func's window reaches the forward and, through autograd, the backward:
    bitwise the ops' results, and the reference's."""
    dtype = BF16 if head_dim == 128 else FP16
    q, k, v, dout = make_qkv(2, 777, 1000, 8, head_dim, dtype, heads_kv=2, seed=head_dim)
    leaves = [t.detach().clone().requires_grad_() for t in (q, k, v)]
    out, lse = fai.flash_attn_func(*leaves, causal=causal, window_size=window, deterministic=True,
                                   return_attn_probs=True)
    out.backward(dout)
    grads = tuple(t.grad for t in leaves)
    check_forward(q, k, v, out.detach(), lse, causal, window)
    check_backward(dout, q, k, v, grads, causal, window)
    ops_out, ops_lse = dash.attn_fwd(q, k, v, causal=causal, window_size=window)
    assert torch.equal(out, ops_out) and torch.equal(lse, ops_lse)
    ops_grads = dash.attn_bwd(dout, q, k, v, ops_out, ops_lse, causal=causal, deterministic=True,
                              window_size=window)
    for name, a, b in zip(("dq", "dk", "dv"), grads, ops_grads):
        assert torch.equal(a, b), f"{name}: autograd's backward is not attn_bwd with the window"


def test_flash_attn_qkvpacked_func_with_window():
    q, k, v, dout = make_qkv(2, 500, 500, 4, 128, BF16, seed=3)
    qkv = torch.stack((q, k, v), dim=2).requires_grad_()
    out, lse = fai.flash_attn_qkvpacked_func(qkv, window_size=(100, 100), deterministic=True,
                                             return_attn_probs=True)
    out.backward(dout)
    check_forward(q, k, v, out.detach(), lse, False, (100, 100))
    check_backward(dout, q, k, v, qkv.grad.unbind(2), False, (100, 100))


@pytest.mark.parametrize("causal,window", FAI_MASKS, ids=_ids(FAI_MASKS))
def test_flash_attn_varlen_func_autograd(causal, window):
    x = make_varlen([300, 1, 0, 777, 129], [500, 3, 17, 640, 129], 8, 2, 128, BF16, seed=11)
    leaves = [x[n].detach().clone().requires_grad_() for n in ("q", "k", "v")]
    out, lse = fai.flash_attn_varlen_func(*leaves, x["cu_q"], x["cu_k"], x["max_q"], x["max_k"], causal=causal,
                                          window_size=window, deterministic=True, return_attn_probs=True)
    out.backward(x["dout"])
    grads = tuple(t.grad for t in leaves)
    check_varlen(x, out.detach(), lse, grads, causal, window)
    ops_out, ops_lse = varlen_fwd(x, causal, window)
    assert torch.equal(out, ops_out) and torch.equal(lse, ops_lse)
    for a, b in zip(grads, varlen_bwd(x, ops_out, ops_lse, causal, window, True)):
        assert torch.equal(a, b)


@pytest.mark.parametrize("left,right,causal", [(100, 0, False), (63, 257, False), (257, 7, True), (-1, 0, False)])
def test_private_entry_points_with_window(left, right, causal):
    """_flash_attn_forward / _flash_attn_backward with window_size_left / window_size_right:
    bitwise the ops' results, gradients in the given buffers."""
    q, k, v, dout = make_qkv(2, 1000, 777, 4, 128, BF16, heads_kv=2, seed=left + right + 10)
    window = (left, right)
    out, lse, *_ = fai._flash_attn_forward(q, k, v, softmax_scale=None, causal=causal, window_size_left=left,
                                           window_size_right=right)
    check_forward(q, k, v, out, lse, causal, window)
    ops_out, ops_lse = dash.attn_fwd(q, k, v, causal=causal, window_size=window)
    assert torch.equal(out, ops_out) and torch.equal(lse, ops_lse)
    dq, dk, dv = (torch.full_like(t, float("nan")) for t in (q, k, v))
    fai._flash_attn_backward(dout, q, k, v, out, lse, None, None, None, None, None, None, dq, dk, dv, None, causal,
                             left, right, 0.0, True)
    check_backward(dout, q, k, v, (dq, dk, dv), causal, window)
    for a, b in zip((dq, dk, dv), dash.attn_bwd(dout, q, k, v, out, lse, causal=causal, deterministic=True,
                                                window_size=window)):
        assert torch.equal(a, b)


def test_private_entry_points_varlen_with_window():
    x = make_varlen([300, 0, 777, 1], [200, 5, 777, 64], 4, 4, 64, FP16, seed=2)
    out, lse, *_ = fai._flash_attn_forward(x["q"], x["k"], x["v"], cu_seqlens_q=x["cu_q"], cu_seqlens_k=x["cu_k"],
                                           max_seqlen_q=x["max_q"], max_seqlen_k=x["max_k"], window_size_left=63,
                                           window_size_right=1)
    dq, dk, dv = (torch.full_like(x[n], float("nan")) for n in ("q", "k", "v"))
    fai._flash_attn_backward(x["dout"], x["q"], x["k"], x["v"], out, lse, x["cu_q"], x["cu_k"], None, None,
                             x["max_q"], x["max_k"], dq, dk, dv, window_size_left=63, window_size_right=1,
                             deterministic=True)
    check_varlen(x, out, lse, (dq, dk, dv), False, (63, 1))


SOFTCAP_MASKS = [(True, (100, 0)), (False, (63, 257)), (False, (0, 0))]


@pytest.mark.parametrize("causal,window", SOFTCAP_MASKS, ids=_ids(SOFTCAP_MASKS))
@pytest.mark.parametrize("head_dim", [64, 128])
def test_window_with_softcap(head_dim, causal, window):
    """Softcap (scores capped to softcap * tanh(s / softcap) before the softmax) inside a
    window, rows without keys included (seqlen_q > seqlen_k), through flash_attn_func."""
    dtype = BF16 if head_dim == 128 else FP16
    softcap = 2.0  # scores of random inputs reach several units: the cap bends them
    q, k, v, dout = make_qkv(2, 1000, 700, 4, head_dim, dtype, heads_kv=2, seed=head_dim + 1)
    q = (q * 2).to(dtype)
    out, lse = run_fwd(q, k, v, causal, window, softcap=softcap)
    check_forward(q, k, v, out, lse, causal, window, softcap=softcap)
    grads = run_bwd(dout, q, k, v, out, lse, causal, window, deterministic=True, softcap=softcap)
    check_backward(dout, q, k, v, grads, causal, window, softcap=softcap)
    leaves = [t.detach().clone().requires_grad_() for t in (q, k, v)]
    fai_out = fai.flash_attn_func(*leaves, causal=causal, window_size=window, softcap=softcap, deterministic=True)
    fai_out.backward(dout)
    assert torch.equal(fai_out, out)
    for a, b in zip((t.grad for t in leaves), grads):
        assert torch.equal(a, b)


# --- torch.library.opcheck ---------------------------------------------------------------------

OPCHECK = [(100, 100, True, (16, 0)), (64, 200, False, (0, 0)), (200, 64, False, (-1, 33)), (77, 77, False, (5, 9))]


@pytest.mark.parametrize("seqlen_q,seqlen_k,causal,window", OPCHECK)
def test_opcheck_attn_fwd(seqlen_q, seqlen_k, causal, window):
    q, k, v, _ = make_qkv(2, seqlen_q, seqlen_k, 2, 64, BF16, seed=7)
    for t in (q, k, v):
        t.requires_grad_()
    torch.library.opcheck(torch.ops.dash.attn_fwd.default, (q, k, v, 0.125, causal, True, 0, "auto", *window, 0.0))


@pytest.mark.parametrize("with_trace", [False, True], ids=["plain", "trace"])
@pytest.mark.parametrize("seqlen_q,seqlen_k,causal,window", OPCHECK[:3])
def test_opcheck_attn_bwd(seqlen_q, seqlen_k, causal, window, with_trace):
    q, k, v, dout = make_qkv(2, seqlen_q, seqlen_k, 2, 128, BF16, seed=8)
    out, lse = dash.attn_fwd(q, k, v, causal=causal, window_size=window)
    trace = dash.trace_buffers(2, 2, seqlen_q, seqlen_k, 128, "cuda") if with_trace else (None, None)
    torch.library.opcheck(torch.ops.dash.attn_bwd.default,
                          (dout, q, k, v, out, lse, 128 ** -0.5, causal, True, 0, "auto", *trace, *window, 0.0))


@pytest.mark.parametrize("causal,window", [(True, (16, 0)), (False, (3, 40))])
def test_opcheck_attn_varlen(causal, window):
    x = make_varlen([50, 0, 17, 129], [70, 3, 17, 100], 4, 2, 64, BF16, seed=6)
    q, k, v = (x[n].detach().clone().requires_grad_() for n in ("q", "k", "v"))
    torch.library.opcheck(torch.ops.dash.attn_varlen_fwd.default,
                          (q, k, v, x["cu_q"], x["cu_k"], None, None, x["max_q"], x["max_k"], 0.125, causal, True, 0,
                           "auto", *window, 0.0))
    out, lse = varlen_fwd(x, causal, window, softmax_scale=0.125)
    torch.library.opcheck(torch.ops.dash.attn_varlen_bwd.default,
                          (x["dout"], x["q"], x["k"], x["v"], out, lse, x["cu_q"], x["cu_k"], None, None, x["max_q"],
                           x["max_k"], 0.125, causal, True, 0, "auto", None, None, *window, 0.0))
