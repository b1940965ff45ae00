"""GPU: deterministic gradients are a function of the inputs alone (issue 14). With
`deterministic=True` and `schedule="auto"` the bits do not change with sm_margin (the grid),
with the heads split over several launches, with a batch computed sequence by sequence,
with a packed batch's sequences reordered, or between a padded batch and the same sequences
packed. The orders that give this (ascending on full masks, diagonal on bands, both dealt
from a counter) are checked against the model in test_determinism.py's trace cases."""
import pytest
import torch

import dash
from conftest import requires_hopper

pytestmark = requires_hopper

# batch, heads, heads_kv, seqlen, head_dim, mask: "full", "causal" or a causal window's left size
CASES = [
    (3, 8, 8, 1531, 128, "full"),
    (2, 8, 8, 2048, 64, "full"),
    (3, 8, 8, 1531, 64, "causal"),
    (2, 8, 8, 2048, 128, "causal"),
    (2, 8, 2, 1000, 128, "causal"),   # GQA 8/2
    (2, 16, 8, 1200, 128, "full"),    # GQA 16/8
    (2, 8, 8, 3001, 128, 700),        # sliding window (700, 0)
    (2, 4, 1, 2500, 64, 300),         # MQA with a window
]
# Query-head groups split over parts (the planner's kv_parts), whose dK / dV partials are added
# in part order after the main kernel.
SPLIT_CASES = [
    (2, 8, 2, 2048, 128, "causal"),   # GQA 8/2, walks of 4 x 32 Q tiles: the group split in 2
    (1, 16, 2, 3001, 64, "causal"),   # GQA 16/2, walks of 8 x 24 Q tiles: split in 4
]
CASES += SPLIT_CASES


def _mask_args(mask):
    if mask == "full":
        return dict(causal=False)
    if mask == "causal":
        return dict(causal=True)
    return dict(causal=True, window_size=(mask, 0))


def _inputs(batch, heads, heads_kv, seqlen, head_dim, mask, seed=0):
    gen = torch.Generator(device="cuda").manual_seed(seed)
    def rand(h):
        return torch.randn(batch, seqlen, h, head_dim, device="cuda", dtype=torch.bfloat16, generator=gen)
    q, k, v, dout = rand(heads), rand(heads_kv), rand(heads_kv), rand(heads)
    out, lse = dash.attn_fwd(q, k, v, **_mask_args(mask))
    return dict(q=q, k=k, v=v, dout=dout, out=out, lse=lse)


def _bwd(x, mask, **kw):
    return dash.attn_bwd(x["dout"], x["q"], x["k"], x["v"], x["out"], x["lse"], deterministic=True,
                         **_mask_args(mask), **kw)


def _assert_equal(got, want, what):
    for name, a, b in zip(("dq", "dk", "dv"), got, want):
        assert torch.equal(a, b), f"{name} differs {what}"


@pytest.mark.parametrize("case", CASES, ids=str)
def test_same_bits_for_any_sm_margin(case):
    x = _inputs(*case)
    mask = case[-1]
    want = _bwd(x, mask)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    grids = set()
    for margin in (20, 100, 101, 125, sms - 1):  # on the H200: 112, 32, 31, 7 and 1 CTAs
        plan = dash.attn_bwd_plan(x["q"], x["k"], sm_margin=margin, deterministic=True,
                                  **_mask_args(mask))
        assert plan["schedule"] == ("ascending" if mask == "full" else "diagonal")
        grids.add(plan["grid"])
        _assert_equal(_bwd(x, mask, sm_margin=margin), want, f"with sm_margin={margin}")
    assert 1 in grids and len(grids) >= 3


@pytest.mark.parametrize("case,parts", zip(SPLIT_CASES, (2, 4)), ids=str)
def test_split_group_cases_split(case, parts):
    """SPLIT_CASES do split: the tests above then check split groups on every grid."""
    x = _inputs(*case)
    assert dash.attn_bwd_plan(x["q"], x["k"], deterministic=True, **_mask_args(case[-1]))["kv_parts"] == parts


@pytest.mark.parametrize("case", CASES, ids=str)
def test_same_bits_with_heads_split_over_launches(case):
    """Ulysses-style: K/V heads (and their query-head groups) in 1, 2, 4 or 8 launches."""
    x = _inputs(*case, seed=1)
    mask = case[-1]
    heads, heads_kv = case[1], case[2]
    group = heads // heads_kv
    want = _bwd(x, mask)
    for launches in (2, 4, 8):
        if heads_kv % launches:
            continue
        per = heads_kv // launches
        parts = []
        for i in range(launches):
            qs, ks = slice(i * per * group, (i + 1) * per * group), slice(i * per, (i + 1) * per)
            sub = dict(q=x["q"][:, :, qs], k=x["k"][:, :, ks], v=x["v"][:, :, ks], dout=x["dout"][:, :, qs],
                       out=x["out"][:, :, qs], lse=x["lse"][:, qs].contiguous())
            parts.append(_bwd(sub, mask))
        got = [torch.cat([p[j] for p in parts], dim=2) for j in range(3)]
        _assert_equal(got, want, f"with the heads in {launches} launches")


@pytest.mark.parametrize("case", CASES, ids=str)
def test_same_bits_sequence_by_sequence(case):
    x = _inputs(*case, seed=2)
    mask = case[-1]
    want = _bwd(x, mask)
    parts = [_bwd({name: t[b:b + 1] for name, t in x.items()}, mask) for b in range(case[0])]
    got = [torch.cat([p[j] for p in parts], dim=0) for j in range(3)]
    _assert_equal(got, want, "with the batch computed sequence by sequence")


def _packed(lens, heads, heads_kv, head_dim, mask, seed):
    gen = torch.Generator(device="cuda").manual_seed(seed)
    seqs = []
    for n in lens:
        def rand(h):
            return torch.randn(n, h, head_dim, device="cuda", dtype=torch.bfloat16, generator=gen)
        seqs.append((rand(heads), rand(heads_kv), rand(heads_kv), rand(heads)))
    return seqs


def _run_packed(seqs, mask, max_len, out=None, lse=None):
    q, k, v, dout = (torch.cat([s[i] for s in seqs]) for i in range(4))
    lens = [s[0].shape[0] for s in seqs]
    cu = torch.tensor([0] + torch.tensor(lens).cumsum(0).tolist(), device="cuda", dtype=torch.int32)
    args = _mask_args(mask)
    if out is None:
        out, lse = dash.attn_varlen_fwd(q, k, v, cu, cu, max_len, max_len, deterministic=True, **args)
    dq, dk, dv = dash.attn_varlen_bwd(dout, q, k, v, out, lse, cu, cu, max_len, max_len, deterministic=True, **args)
    bounds = cu.tolist()
    return [(dq[a:b], dk[a:b], dv[a:b]) for a, b in zip(bounds, bounds[1:])]


@pytest.mark.parametrize("heads,heads_kv,head_dim,mask", [(8, 8, 128, "causal"), (8, 2, 64, "full"),
                                                          (4, 4, 128, 500), (8, 1, 128, "full")])
def test_packed_rows_reordered(heads, heads_kv, head_dim, mask):
    lens = [1531, 17, 4096, 700, 1, 2999]
    seqs = _packed(lens, heads, heads_kv, head_dim, mask, seed=3)
    want = _run_packed(seqs, mask, max(lens))
    order = [3, 0, 5, 2, 4, 1]
    got = _run_packed([seqs[i] for i in order], mask, max(lens))
    for pos, i in enumerate(order):
        _assert_equal(got[pos], want[i], f"for sequence {i} with the sequences reordered")


@pytest.mark.parametrize("case", [c for c in CASES if c[0] > 1 and c not in SPLIT_CASES], ids=str)
def test_padded_and_packed_give_the_same_bits(case):
    """A fixed-length batch and the same sequences packed (cu_seqlens of equal steps) run
    the same orders, walks and splits. (Not SPLIT_CASES: packed walks may be 128 steps long,
    fixed-length bands' 64, so there the two split a group differently, as the README says.)"""
    batch, heads, heads_kv, seqlen, head_dim, mask = case
    x = _inputs(*case, seed=4)
    want = _bwd(x, mask)
    seqs = [tuple(x[n][b] for n in ("q", "k", "v", "dout")) for b in range(batch)]
    out = x["out"].reshape(batch * seqlen, heads, head_dim)                   # the same forward's out
    lse = x["lse"].permute(1, 0, 2).reshape(heads, batch * seqlen).contiguous()  # and LSE, packed
    got = _run_packed(seqs, mask, seqlen, out, lse)
    for b in range(batch):
        _assert_equal(got[b], tuple(g[b] for g in want), f"between the padded and packed batch (sequence {b})")
