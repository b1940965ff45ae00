"""GPU: sequences of 64k-128k tokens (the other files stop at a few thousand). A head then has
1024-2048 Q tiles, the backward walks that many steps dealt from a counter, and the workspaces
reach gigabytes: index math that a short test never reaches. Against an fp64 reference computed
for sampled rows alone (out, LSE and dQ of query rows at the start, middle, end and at random;
dK / dV of key rows likewise, summed over the K/V head's query heads), the deterministic backward
bitwise equal over two runs, and every output element finite (outputs start as NaN: poisoned
allocator); fixed-length (MHA, GQA, MQA) and one packed batch with a long document
(bench/RESULTS.md item 250 ran the same checks at more shapes)."""
import itertools

import pytest
import torch

import dash
from conftest import requires_hopper
from gpu_helpers import LSE_ATOL, default_scale, poison_allocator

pytestmark = requires_hopper

# bf16 outputs against fp64: max |error| / max |reference| (one bf16 rounding is 2^-8 ~ 3.9e-3).
REL_TOL = 1.5e-2


def _rel(got, want):
    return ((got.double() - want.double()).abs().max() / want.double().abs().max().clamp_min(1e-30)).item()


def _sample(n, count, gen, device):
    fixed = torch.cat([torch.arange(0, 4), torch.arange(n // 2 - 2, n // 2 + 2), torch.arange(n - 8, n)])
    return torch.cat([fixed, torch.randint(0, n, (count,), generator=gen)]).clamp(max=n - 1).to(device)


def _check_sequence(q, k, v, dout, out, lse, grads, causal, scale, gen):
    """One sequence: q / dout / out (seqlen, heads, d), k / v (seqlen, heads_kv, d), lse (heads, seqlen),
    grads (dq, dk, dv) in the same layouts; rows sampled, fp64 reference for those rows alone."""
    seqlen, heads, d = q.shape
    heads_kv = k.shape[1]
    group = heads // heads_kv
    dev = q.device
    positions = torch.arange(seqlen, device=dev)
    rows, cols = _sample(seqlen, 12, gen, dev), _sample(seqlen, 8, gen, dev)
    for h in range(heads):
        qh, kh, vh = q[:, h].double(), k[:, h // group].double(), v[:, h // group].double()
        doh, oh = dout[:, h].double(), out[:, h].double()
        s = (qh[rows] @ kh.T) * scale
        if causal:
            s = s.masked_fill(positions[None, :] > rows[:, None], float("-inf"))
        lse_ref = torch.logsumexp(s, dim=1)
        p = torch.exp(s - lse_ref[:, None])
        ds = p * (doh[rows] @ vh.T - (doh[rows] * oh[rows]).sum(1)[:, None])
        assert _rel(out[rows, h], p @ vh) < REL_TOL, f"out of head {h}"
        assert (lse[h, rows].double() - lse_ref).abs().max().item() < LSE_ATOL, f"LSE of head {h}"
        assert _rel(grads[0][rows, h], (ds @ kh) * scale) < REL_TOL, f"dq of head {h}"
    for hk in range(heads_kv):
        dk_ref = torch.zeros(len(cols), d, device=dev, dtype=torch.float64)
        dv_ref = torch.zeros_like(dk_ref)
        kc, vc = k[cols, hk].double(), v[cols, hk].double()
        for h in range(hk * group, (hk + 1) * group):
            qh, doh, oh = q[:, h].double(), dout[:, h].double(), out[:, h].double()
            s = (qh @ kc.T) * scale
            if causal:
                s = s.masked_fill(cols[None, :] > positions[:, None], float("-inf"))
            p = torch.exp(s - lse[h].double()[:, None])  # the LSE checked above
            ds = p * (doh @ vc.T - (doh * oh).sum(1)[:, None])
            dv_ref += p.T @ doh
            dk_ref += (ds.T @ qh) * scale
        assert _rel(grads[1][cols, hk], dk_ref) < REL_TOL, f"dk of K/V head {hk}"
        assert _rel(grads[2][cols, hk], dv_ref) < REL_TOL, f"dv of K/V head {hk}"


def _assert_all_written(*tensors):
    for t in tensors:
        assert torch.isfinite(t).all(), "an output element is NaN / inf (left unwritten?)"


def _randn(*shape, gen):
    return torch.randn(*shape, device="cuda", dtype=torch.bfloat16, generator=gen)


@pytest.mark.parametrize("seqlen,heads,heads_kv,head_dim,causal", [
    (131072, 1, 1, 128, True),
    (65536, 4, 2, 128, True),   # GQA
    (65536, 4, 1, 64, False),   # MQA, full mask
])
def test_long_fixed_length(seqlen, heads, heads_kv, head_dim, causal):
    gen = torch.Generator(device="cuda").manual_seed(seqlen + heads + head_dim)
    q, dout = _randn(1, seqlen, heads, head_dim, gen=gen), _randn(1, seqlen, heads, head_dim, gen=gen)
    k, v = _randn(1, seqlen, heads_kv, head_dim, gen=gen), _randn(1, seqlen, heads_kv, head_dim, gen=gen)
    poison_allocator(q, k, v)
    out, lse = dash.attn_fwd(q, k, v, causal=causal)
    poison_allocator(q, k, v)
    grads = dash.attn_bwd(dout, q, k, v, out, lse, causal=causal, deterministic=True)
    again = dash.attn_bwd(dout, q, k, v, out, lse, causal=causal, deterministic=True)
    _assert_all_written(out, lse, *grads)
    assert all(torch.equal(a, b) for a, b in zip(grads, again)), "deterministic backward not bitwise repeatable"
    _check_sequence(q[0], k[0], v[0], dout[0], out[0], lse[0], [g[0] for g in grads], causal,
                    default_scale(head_dim), torch.Generator().manual_seed(seqlen))


def test_long_document_in_a_packed_batch():
    """A 70k-token document packed with short ones (causal, GQA 4 / 2, hdim 128)."""
    lengths = [70001, 3000, 129, 1]
    heads, heads_kv, head_dim = 4, 2, 128
    gen = torch.Generator(device="cuda").manual_seed(7)
    total = sum(lengths)
    q, dout = _randn(total, heads, head_dim, gen=gen), _randn(total, heads, head_dim, gen=gen)
    k, v = _randn(total, heads_kv, head_dim, gen=gen), _randn(total, heads_kv, head_dim, gen=gen)
    cu = torch.tensor([0, *itertools.accumulate(lengths)], dtype=torch.int32, device="cuda")
    longest = max(lengths)
    poison_allocator(q, k, v)
    out, lse = dash.attn_varlen_fwd(q, k, v, cu, cu, longest, longest, causal=True)
    poison_allocator(q, k, v)
    grads = dash.attn_varlen_bwd(dout, q, k, v, out, lse, cu, cu, longest, longest, causal=True, deterministic=True)
    again = dash.attn_varlen_bwd(dout, q, k, v, out, lse, cu, cu, longest, longest, causal=True, deterministic=True)
    _assert_all_written(out, lse, *grads)
    assert all(torch.equal(a, b) for a, b in zip(grads, again)), "deterministic backward not bitwise repeatable"
    scale = default_scale(head_dim)
    for b in (0, 1):  # the long document and a short one beside it
        lo, hi = int(cu[b]), int(cu[b + 1])
        _check_sequence(q[lo:hi], k[lo:hi], v[lo:hi], dout[lo:hi], out[lo:hi], lse[:, lo:hi],
                        [g[lo:hi] for g in grads], True, scale, torch.Generator().manual_seed(b))
