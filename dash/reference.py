"""Plain-PyTorch attention, forward and backward, for tests and benchmarks.

Layout as in flash_attn_interface: (batch, seqlen, heads, head_dim); softmax_lse is
(batch, heads, seqlen_q) in natural log. Masks are FlashAttention-3's bands, aligned
bottom-right: with window_size = (left, right) query i sees key j iff
i + shift - left <= j <= i + shift + right, shift = seqlen_k - seqlen_q, a negative bound
unbounded; causal=True sets right = 0. softcap > 0 caps the scaled scores,
s -> softcap * tanh(s / softcap), before the softmax. A query that sees no key at all gets
out = 0, lse = -inf and zero gradients (as FlashAttention does). GQA / MQA: k and v may
have fewer heads (a divisor of q's); query head h reads K/V head h // (heads / heads_kv), and
dk, dv sum over each K/V head's query group.

compute_dtype picks the arithmetic: float64 for a ground truth, or the inputs' own
16-bit dtype for "what a plain PyTorch implementation in bf16/fp16 gets", the yardstick
for tolerances.
"""
from __future__ import annotations

import math

import torch


def band(causal: bool = False, window_size=(-1, -1)) -> tuple[int, int]:
    """The (left, right) band of a call (negative: unbounded), causal setting right = 0."""
    left, right = (int(x) for x in window_size)
    left = -1 if left < 0 else left
    right = 0 if causal else (-1 if right < 0 else right)
    return left, right


def band_mask(seqlen_q: int, seqlen_k: int, device, causal: bool = False, window_size=(-1, -1)) -> torch.Tensor:
    """Boolean (seqlen_q, seqlen_k), True where the key is hidden from the query."""
    left, right = band(causal, window_size)
    rows = torch.arange(seqlen_q, device=device)[:, None] + (seqlen_k - seqlen_q)
    cols = torch.arange(seqlen_k, device=device)[None, :]
    hidden = torch.zeros(seqlen_q, seqlen_k, dtype=torch.bool, device=device)
    if right >= 0:
        hidden |= cols > rows + right
    if left >= 0:
        hidden |= cols < rows - left
    return hidden


def causal_mask(seqlen_q: int, seqlen_k: int, device) -> torch.Tensor:
    """Boolean (seqlen_q, seqlen_k), True where the key is hidden from the query."""
    return band_mask(seqlen_q, seqlen_k, device, causal=True)


def _probabilities(q, k, softmax_scale, causal, window_size=(-1, -1), softcap=0.0):
    """P, LSE and d(capped score)/d(scaled score) (None without softcap) for (b, h, s, d)
    inputs already in the compute dtype."""
    scores = (q @ k.transpose(-1, -2)) * softmax_scale
    dcap = None
    if softcap > 0:
        capped = torch.tanh(scores / softcap)
        dcap = 1 - capped * capped
        scores = softcap * capped
    if causal or tuple(window_size) != (-1, -1):
        hidden = band_mask(q.shape[-2], k.shape[-2], q.device, causal, window_size)
        scores = scores.masked_fill(hidden, float("-inf"))
    lse = torch.logsumexp(scores.float() if scores.dtype in (torch.float16, torch.bfloat16) else scores, dim=-1)
    probs = torch.exp(scores - lse[..., None].to(scores.dtype))
    probs = torch.nan_to_num(probs, nan=0.0)  # rows with no visible key
    return probs, lse, dcap


def _heads_first(*tensors, dtype):
    return [t.to(dtype).transpose(1, 2) for t in tensors]


def _expand_kv(q, k, v):
    """k, v with each K/V head repeated for its query group (GQA / MQA), and the group size."""
    heads, heads_kv = q.shape[2], k.shape[2]
    assert heads % heads_kv == 0, f"{heads} query heads are not a multiple of {heads_kv} K/V heads"
    group = heads // heads_kv
    if group == 1:
        return k, v, 1
    return k.repeat_interleave(group, dim=2), v.repeat_interleave(group, dim=2), group


def _reduce_group(grad, group):
    """Sums a (batch, seqlen, heads, d) gradient over each K/V head's query group."""
    if group == 1:
        return grad
    b, s, h, d = grad.shape
    return grad.reshape(b, s, h // group, group, d).sum(dim=3)


def attention_forward(q, k, v, softmax_scale: float | None = None, causal: bool = False,
                      compute_dtype=torch.float32, window_size=(-1, -1), softcap: float = 0.0):
    """Returns (out in q.dtype, softmax_lse fp32 (batch, heads, seqlen_q))."""
    scale = 1.0 / math.sqrt(q.shape[-1]) if softmax_scale is None else softmax_scale
    k, v, _ = _expand_kv(q, k, v)
    qh, kh, vh = _heads_first(q, k, v, dtype=compute_dtype)
    probs, lse, _ = _probabilities(qh, kh, scale, causal, window_size, softcap)
    out = probs @ vh
    return out.transpose(1, 2).to(q.dtype), lse.float()


def attention_backward(dout, q, k, v, softmax_scale: float | None = None, causal: bool = False,
                       compute_dtype=torch.float64, window_size=(-1, -1), softcap: float = 0.0):
    """Gradients (dq, dk, dv) of attention, in compute_dtype, (batch, seqlen, heads, d).

    The forward is recomputed in compute_dtype, so with float64 this is the exact
    gradient of the function the kernel approximates.
    """
    scale = 1.0 / math.sqrt(q.shape[-1]) if softmax_scale is None else softmax_scale
    k, v, group = _expand_kv(q, k, v)
    qh, kh, vh, doh = _heads_first(q, k, v, dout, dtype=compute_dtype)
    probs, _, dcap = _probabilities(qh, kh, scale, causal, window_size, softcap)
    out = probs @ vh
    dv = probs.transpose(-1, -2) @ doh
    dp = doh @ vh.transpose(-1, -2)
    delta = (doh * out).sum(dim=-1, keepdim=True)
    ds = probs * (dp - delta)
    if dcap is not None:
        ds = ds * dcap
    dq = (ds @ kh) * scale
    dk = (ds.transpose(-1, -2) @ qh) * scale
    return dq.transpose(1, 2), _reduce_group(dk.transpose(1, 2), group), _reduce_group(dv.transpose(1, 2), group)


def attention_flops(batch: int, heads: int, seqlen_q: int, seqlen_k: int, head_dim: int,
                    causal: bool, backward: bool, window_size=(-1, -1), head_dim_v: int | None = None) -> float:
    """FLOPs by the DASH-NOTES section 6 convention: forward 4*B*H*Sq*Sk*d, backward 2.5x,
    halved for causal. A sliding window counts the (query, key) pairs inside it. With v's
    head dim d_v != d, GEMM by GEMM (as FlashAttention-3 counts): forward 2*B*H*Sq*Sk*(d + d_v)
    (S, P V), backward 2*B*H*Sq*Sk*(3d + 2d_v) (S, dQ, dK; dP, dV)."""
    head_dim_v = head_dim if head_dim_v is None else head_dim_v
    per_pair = 2.0 * ((3 * head_dim + 2 * head_dim_v) if backward else (head_dim + head_dim_v))
    flops = per_pair * batch * heads * seqlen_q * seqlen_k
    if tuple(window_size) != (-1, -1):
        flops *= visible_fraction(seqlen_q, seqlen_k, causal, window_size)
    elif causal:
        flops /= 2
    return flops


def visible_fraction(seqlen_q: int, seqlen_k: int, causal: bool = False, window_size=(-1, -1)) -> float:
    """The fraction of (query, key) pairs the band lets through."""
    left, right = band(causal, window_size)
    rows = torch.arange(seqlen_q, dtype=torch.int64) + (seqlen_k - seqlen_q)
    first = (rows - left).clamp(min=0) if left >= 0 else torch.zeros_like(rows)
    last = (rows + right).clamp(max=seqlen_k - 1) if right >= 0 else torch.full_like(rows, seqlen_k - 1)
    return float((last - first + 1).clamp(min=0).sum()) / (seqlen_q * seqlen_k)


def _sequences(cu_seqlens_q, cu_seqlens_k, seqused_q=None, seqused_k=None):
    """(b, q rows, used q rows, k rows used) of each sequence of a packed batch."""
    cu_q = [int(x) for x in cu_seqlens_q]
    cu_k = [int(x) for x in cu_seqlens_k]
    for b in range(len(cu_q) - 1):
        used_q = cu_q[b + 1] - cu_q[b] if seqused_q is None else int(seqused_q[b])
        used_k = cu_k[b + 1] - cu_k[b] if seqused_k is None else int(seqused_k[b])
        yield b, slice(cu_q[b], cu_q[b] + used_q), slice(cu_k[b], cu_k[b] + used_k)


def attention_varlen_forward(q, k, v, cu_seqlens_q, cu_seqlens_k, softmax_scale: float | None = None,
                             causal: bool = False, compute_dtype=torch.float32, seqused_q=None, seqused_k=None,
                             window_size=(-1, -1), softcap: float = 0.0):
    """Packed batch (q (total_q, heads, d), k / v (total_k, heads_kv, d)), one sequence at a
    time: (out in q.dtype, softmax_lse fp32 (heads, total_q)). Rows past seqused: out 0, LSE -inf."""
    out = q.new_zeros(*q.shape[:2], v.shape[-1])  # v's head dim
    lse = torch.full((q.shape[1], q.shape[0]), float("-inf"), dtype=torch.float32, device=q.device)
    for _, rows_q, rows_k in _sequences(cu_seqlens_q, cu_seqlens_k, seqused_q, seqused_k):
        if rows_q.stop == rows_q.start:
            continue
        if rows_k.stop == rows_k.start:
            continue  # no key: out 0, LSE -inf
        o, l = attention_forward(q[None, rows_q], k[None, rows_k], v[None, rows_k], softmax_scale, causal,
                                 compute_dtype, window_size, softcap)
        out[rows_q] = o[0]
        lse[:, rows_q] = l[0]
    return out, lse


def attention_varlen_backward(dout, q, k, v, cu_seqlens_q, cu_seqlens_k, softmax_scale: float | None = None,
                              causal: bool = False, compute_dtype=torch.float64, seqused_q=None, seqused_k=None,
                              window_size=(-1, -1), softcap: float = 0.0):
    """Gradients (dq, dk, dv) of a packed batch in compute_dtype, in the packed layouts;
    rows past seqused get 0."""
    dq = torch.zeros(q.shape, dtype=compute_dtype, device=q.device)
    dk = torch.zeros(k.shape, dtype=compute_dtype, device=k.device)
    dv = torch.zeros(v.shape, dtype=compute_dtype, device=v.device)
    for _, rows_q, rows_k in _sequences(cu_seqlens_q, cu_seqlens_k, seqused_q, seqused_k):
        if rows_q.stop == rows_q.start or rows_k.stop == rows_k.start:
            continue
        g = attention_backward(dout[None, rows_q], q[None, rows_q], k[None, rows_k], v[None, rows_k], softmax_scale,
                               causal, compute_dtype, window_size, softcap)
        dq[rows_q], dk[rows_k], dv[rows_k] = g[0][0], g[1][0], g[2][0]
    return dq, dk, dv
