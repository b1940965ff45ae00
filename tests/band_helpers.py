"""Helpers of the GPU tests of banded masks and softcap (tests/test_window.py,
tests/test_softcap.py): inputs, calls with poisoned outputs, which rows and keys a band lets
see, and the LSE check."""
import itertools

import torch

import dash
from dash import reference
from gpu_helpers import LSE_ATOL, check_lse, poison_allocator  # noqa: F401 (re-exported)

# Shapes of tests/test_window.py that tools/stress_calls.py loops too.
NO_KEY = [  # seqlen_q, seqlen_k, causal, window, what is empty
    (300, 100, False, (0, 0), "rows"),     # rows 0..199: their diagonal is left of key 0
    (300, 100, True, (5, 0), "rows"),      # a window left of all keys
    (500, 64, False, (-1, 10), "rows"),
    (1000, 17, False, (1, 1), "rows"),
    (100, 300, False, (0, 0), "keys"),     # keys 0..199: no query's diagonal
    (64, 1000, False, (3, 3), "keys"),
    (200, 1000, False, (50, -1), "keys"),
    (300, 129, False, (0, 0), "rows"),
]
MIXES = {  # packed batches: query lengths, key lengths (None: the same)
    "tiny": ([0, 1, 17, 0, 128, 1, 129, 5], None),
    "mixed": ([300, 1, 2049, 0, 64, 1000, 17], None),
    "unequal": ([200, 0, 1, 777, 128], [500, 3, 0, 640, 1]),
}
VARLEN_MASKS = [(True, (100, 0)), (False, (0, 0)), (False, (63, 257)), (False, (-1, 1)), (False, (257, -1)),
                (True, (1, 0)), (False, (5000, 5000))]


def varlen_case(mix, causal, window, head_dim):
    """(heads, heads_kv, dtype, seed) of the packed case (mix, mask, head_dim): GQA, MQA and MHA
    and both dtypes spread over the cases."""
    i = VARLEN_MASKS.index((causal, window))
    heads, heads_kv = [(4, 2), (4, 1), (3, 3)][(i + len(mix)) % 3]
    return heads, heads_kv, (torch.bfloat16, torch.float16)[(i + head_dim // 64) % 2], i + head_dim


def make_qkv(batch, seqlen_q, seqlen_k, heads, head_dim, dtype, heads_kv=None, seed=0):
    """Random q, k, v and dout, (batch, seqlen, heads, head_dim)."""
    gen = torch.Generator(device="cuda").manual_seed(seed)
    heads_kv = heads if heads_kv is None else heads_kv
    q = torch.randn(batch, seqlen_q, heads, head_dim, generator=gen, device="cuda", dtype=dtype)
    k = torch.randn(batch, seqlen_k, heads_kv, head_dim, generator=gen, device="cuda", dtype=dtype)
    v = torch.randn(batch, seqlen_k, heads_kv, head_dim, generator=gen, device="cuda", dtype=dtype)
    dout = torch.randn(batch, seqlen_q, heads, head_dim, generator=gen, device="cuda", dtype=dtype)
    return q, k, v, dout


def visibility(seqlen_q, seqlen_k, causal, window):
    """(rows that see some key, keys some row sees), boolean (seqlen_q,) and (seqlen_k,)."""
    visible = ~reference.band_mask(seqlen_q, seqlen_k, "cuda", causal, window)
    return visible.any(1), visible.any(0)


def run_fwd(q, k, v, causal, window, **kw):
    """dash.attn_fwd with NaN-poisoned allocations of out's (v's head dim) and lse's sizes."""
    batch, seqlen_q, heads, _ = q.shape
    poison_allocator(torch.empty(batch, seqlen_q, heads, v.shape[-1], dtype=q.dtype, device=q.device),
                     torch.empty(batch, heads, seqlen_q, dtype=torch.float32, device=q.device))
    return dash.attn_fwd(q, k, v, causal=causal, window_size=window, **kw)


def run_bwd(dout, q, k, v, out, lse, causal, window, **kw):
    """dash.attn_bwd with NaN-poisoned allocations for dq, dk, dv."""
    poison_allocator(q, k, v)
    return dash.attn_bwd(dout, q, k, v, out, lse, causal=causal, window_size=window, **kw)


def assert_bitwise_repeats(dout, q, k, v, causal, window, repeats, **kw):
    """Forward and deterministic backward run `repeats` times give bitwise-equal results;
    returns the first run's (out, lse) and gradients."""
    out, lse = run_fwd(q, k, v, causal, window, **kw)
    first = run_bwd(dout, q, k, v, out, lse, causal, window, deterministic=True, **kw)
    for i in range(repeats - 1):
        again = run_bwd(dout, q, k, v, out, lse, causal, window, deterministic=True, **kw)
        for name, a, b in zip(("dq", "dk", "dv"), first, again):
            assert torch.equal(a, b), f"{name} differs from the first run at repeat {i + 1}"
        out2, lse2 = run_fwd(q, k, v, causal, window, **kw)
        assert torch.equal(out, out2) and torch.equal(lse, lse2), f"forward differs at repeat {i + 1}"
    return (out, lse), first


def make_varlen(lengths_q, lengths_k, heads, heads_kv, head_dim, dtype, seed=0):
    lengths_k = lengths_q if lengths_k is None else lengths_k
    gen = torch.Generator(device="cuda").manual_seed(seed)
    q = torch.randn(sum(lengths_q), heads, head_dim, generator=gen, device="cuda", dtype=dtype)
    k = torch.randn(sum(lengths_k), heads_kv, head_dim, generator=gen, device="cuda", dtype=dtype)
    v = torch.randn(sum(lengths_k), heads_kv, head_dim, generator=gen, device="cuda", dtype=dtype)
    dout = torch.randn(sum(lengths_q), heads, head_dim, generator=gen, device="cuda", dtype=dtype)
    cu_q = torch.tensor([0, *itertools.accumulate(lengths_q)], dtype=torch.int32, device="cuda")
    cu_k = torch.tensor([0, *itertools.accumulate(lengths_k)], dtype=torch.int32, device="cuda")
    return dict(q=q, k=k, v=v, dout=dout, cu_q=cu_q, cu_k=cu_k, max_q=max(lengths_q), max_k=max(lengths_k))


def varlen_fwd(x, causal, window, **kw):
    poison_allocator(x["q"], torch.empty(x["q"].shape[1], x["q"].shape[0], dtype=torch.float32, device="cuda"))
    return dash.attn_varlen_fwd(x["q"], x["k"], x["v"], x["cu_q"], x["cu_k"], x["max_q"], x["max_k"], causal=causal,
                                window_size=window, **kw)


def varlen_bwd(x, out, lse, causal, window, deterministic, **kw):
    poison_allocator(x["q"], x["k"], x["v"])
    return dash.attn_varlen_bwd(x["dout"], x["q"], x["k"], x["v"], out, lse, x["cu_q"], x["cu_k"], x["max_q"],
                                x["max_k"], causal=causal, deterministic=deterministic, window_size=window, **kw)


def assert_varlen_bitwise_repeats(x, out, lse, causal, window, repeats, **kw):
    """The packed deterministic backward run `repeats` times gives bitwise-equal gradients;
    returns the first run's."""
    first = varlen_bwd(x, out, lse, causal, window, True, **kw)
    for i in range(repeats - 1):
        again = varlen_bwd(x, out, lse, causal, window, True, **kw)
        for name, a, b in zip(("dq", "dk", "dv"), first, again):
            assert torch.equal(a, b), f"{name} differs from the first run at repeat {i + 1}"
    return first


def varlen_visibility(x, causal, window, seqused_q=None, seqused_k=None):
    """Packed (rows that see some key, keys some row sees), over total_q / total_k rows: each
    sequence's band (bottom-right aligned on its used lengths); unused rows see nothing."""
    cu_q, cu_k = x["cu_q"].tolist(), x["cu_k"].tolist()
    rows_see = torch.zeros(cu_q[-1], dtype=torch.bool, device=x["q"].device)
    keys_seen = torch.zeros(cu_k[-1], dtype=torch.bool, device=x["q"].device)
    for b in range(len(cu_q) - 1):
        len_q = cu_q[b + 1] - cu_q[b] if seqused_q is None else seqused_q[b]
        len_k = cu_k[b + 1] - cu_k[b] if seqused_k is None else seqused_k[b]
        if len_q and len_k:
            rows, keys = visibility(len_q, len_k, causal, window)
            rows_see[cu_q[b]:cu_q[b] + len_q] = rows
            keys_seen[cu_k[b]:cu_k[b] + len_k] = keys
    return rows_see, keys_seen
