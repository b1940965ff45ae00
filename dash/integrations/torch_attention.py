"""PyTorch's flash-attention door: dash as the kernels behind F.scaled_dot_product_attention's
flash backend and torch.nn.attention.varlen.varlen_attn (torch >= 2.11).

    import dash.integrations.torch_attention as dash_torch
    dash_torch.activate()   # registers "DASH", then torch.nn.attention.activate_flash_attention_impl("DASH")
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION): out = F.scaled_dot_product_attention(q, k, v, is_causal=True)

torch.nn.attention.restore_flash_attention_impl() puts PyTorch's own kernels back.

How it plugs in: torch/nn/attention/_registry.py keeps a name -> register_fn table;
activate_flash_attention_impl(name) first removes the active impl (handle.remove()), then
calls register_fn() and keeps the handle it returns. Like FlashAttention-3's
(torch/nn/attention/_fa3.py), dash's register_fn overrides, on the CUDA dispatch key, the
aten ops that both front ends reach: _scaled_dot_product_flash_attention(_backward) (what
SDPA runs when it picks the flash backend) and _flash_attention_forward/_backward (what
varlen_attn runs, packed (total, heads, d) with int32 cu_seq_q / cu_seq_k), plus their
`.quantized` (FP8) overloads so that none of these reaches another kernel while dash is
active. aten's autograd formulas and meta kernels stay; the kernels below return what those
expect (layouts of torch.empty_like(query) etc., fp32 LSE (batch, heads, seqlen_q) or
(heads, total_q), zero RNG state).

What runs dash: bf16 / fp16, head dims 64, 96, 128, 192 and 256, full, causal and sliding-window masks
(bottom-right aligned; SDPA itself only sends causal calls with seqlen_q == seqlen_k to the
flash backend, where the alignments agree; varlen_attn's window_size=(-1, 0) is causal, other
windows are FlashAttention-3's sliding windows), GQA / MQA
(SDPA's enable_gqa=True, or fewer K/V heads in varlen_attn), packed batches, seqused_k
(forward only). Everything else raises NotImplementedError naming the argument: dropout_p,
alibi_slopes, return_debug_mask, q/k/v_descale (FP8), other
head dims and dtypes, seqused_k with inputs that require grad (aten's backward op has no
seqused_k). SDPA still picks its backend before any of this: on Hopper with cuDNN >= 9.15
it ranks cuDNN attention first, which declines only under use_deterministic_algorithms(True),
so outside sdpa_kernel(SDPBackend.FLASH_ATTENTION) dash runs only in deterministic mode.

Determinism: the backward runs dash's ordered, bitwise reproducible schedule when
torch.are_deterministic_algorithms_enabled() is true at backward time (as FA3's
registration decides it), the unordered one otherwise. torch._C._set_sm_carveout_experimental
becomes dash's sm_margin.
"""
from __future__ import annotations

import dataclasses
import warnings

import torch

from .. import _library
from .. import flash_attn_interface as fai

NAME = "DASH"

_SDPA = "aten::_scaled_dot_product_flash_attention"
_SDPA_BWD = "aten::_scaled_dot_product_flash_attention_backward"
_FLASH = "aten::_flash_attention_forward"
_FLASH_BWD = "aten::_flash_attention_backward"


def register(name: str = NAME) -> str:
    """Adds dash to torch.nn.attention's flash-attention registry under `name` (default
    "DASH"); activate_flash_attention_impl(name) then installs it. Returns the name."""
    from torch.nn.attention import register_flash_attention_impl

    register_flash_attention_impl(name, register_fn=_activate)
    return name


def activate(name: str = NAME) -> None:
    """register(name), then torch.nn.attention.activate_flash_attention_impl(name)."""
    from torch.nn.attention import activate_flash_attention_impl

    activate_flash_attention_impl(register(name))


@dataclasses.dataclass
class _Handle:
    """What the registry keeps while dash is active; remove() restores PyTorch's kernels."""
    library: torch.library.Library | None

    def remove(self) -> None:
        if self.library is not None:
            self.library._destroy()
            self.library = None


def _activate() -> _Handle:
    return _install_kernels("CUDA")


def _install_kernels(dispatch_key: str) -> _Handle:
    """Overrides the six aten ops on `dispatch_key` (the registry uses CUDA; the CPU tests
    install the same kernels on CPU, where aten has none of these ops)."""
    _library.require_library()  # fail at activation, not at the first attention call
    lib = torch.library.Library("aten", "IMPL", dispatch_key)  # noqa: TOR901
    with warnings.catch_warnings():
        # Replacing aten's own CUDA kernels is the point; the dispatcher warns about it.
        warnings.filterwarnings("ignore", message=".*Overriding a previously registered kernel.*")
        warnings.filterwarnings("ignore", message=".*Warning only once for all operators.*")
        for op, kernel in (("_scaled_dot_product_flash_attention", _sdpa_forward),
                           ("_scaled_dot_product_flash_attention.quantized", _sdpa_forward_quantized),
                           ("_scaled_dot_product_flash_attention_backward", _sdpa_backward),
                           ("_flash_attention_forward", _flash_forward),
                           ("_flash_attention_forward.quantized", _flash_forward_quantized),
                           ("_flash_attention_backward", _flash_backward)):
            lib.impl(op, kernel, dispatch_key)
    return _Handle(lib)


# --- shared by the kernels ---------------------------------------------------------------

def _reject(func: str, dropout_p=0.0, return_debug_mask=False, alibi_slopes=None) -> None:
    if dropout_p != 0.0:
        raise fai._not_supported(func, "dropout_p", dropout_p, "no attention dropout")
    if return_debug_mask:
        raise fai._not_supported(func, "return_debug_mask", return_debug_mask, "dash returns no attention weights")
    if alibi_slopes is not None:
        raise fai._not_supported(func, "alibi_slopes", alibi_slopes, "no ALiBi bias")


def _window(window_size_left, window_size_right) -> tuple[int, int]:
    # aten passes no window as None (SDPA) or -1 (varlen_attn); causal varlen_attn as (-1, 0).
    left = -1 if window_size_left is None else int(window_size_left)
    right = -1 if window_size_right is None else int(window_size_right)
    return left, right


def _sm_margin() -> int:
    return torch._C._get_sm_carveout_experimental() or 0


def _in_layout_of(result: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """result, copied into torch.empty_like(like)'s strides if it does not have them: aten's
    meta kernels (what torch.compile plans with) promise that layout for out and the
    gradients, and dash writes fresh contiguous (batch, seqlen, heads, d) tensors."""
    target = torch.empty_like(like, dtype=result.dtype, device="meta")
    if result.stride() == target.stride():
        return result
    return torch.empty_like(like, dtype=result.dtype).copy_(result)


def _no_rng(query: torch.Tensor):
    """(rng_state, philox_offset, debug_attn_mask) as aten's flash kernels return them
    without dropout."""
    return (torch.zeros((2,), dtype=torch.uint64, device=query.device),
            torch.zeros((), dtype=torch.uint64, device=query.device),
            torch.empty(0, dtype=query.dtype, device=query.device))


def _forward(func, q, k, v, cu_seq_q, cu_seq_k, max_q, max_k, scale, causal, seqused_k=None, window=(-1, -1)):
    """dash's forward on FA3's layouts: (out contiguous, lse)."""
    if cu_seq_q is None and cu_seq_k is None:
        if seqused_k is not None:
            raise fai._not_supported(func, "seqused_k", seqused_k, "seqused needs cu_seq_q / cu_seq_k (varlen)")
        # deterministic=None: the forward is the same either way; aten's autograd formula,
        # not dash's, picks the backward (see _backward).
        out, lse = fai._attention(func, q, k, v, scale, causal, None, _sm_margin(), window)
    else:
        if cu_seq_q is None or cu_seq_k is None:
            raise ValueError(f"dash {func}: a variable-length call needs both cu_seq_q and cu_seq_k")
        if seqused_k is not None and any(t.requires_grad for t in (q, k, v)):
            raise fai._not_supported(func, "seqused_k", seqused_k,
                                     "only without gradients: aten's _flash_attention_backward has no seqused_k")
        out, lse = fai._varlen_attention(func, q, k, v, cu_seq_q, cu_seq_k, max_q, max_k, None, seqused_k, scale,
                                         causal, None, _sm_margin(), window)
    return out, lse.contiguous()


def _backward(func, dout, q, k, v, out, lse, cu_seq_q, cu_seq_k, max_q, max_k, scale, causal, window=(-1, -1)):
    """dash's backward on FA3's layouts: (dq, dk, dv), contiguous."""
    from ..autograd import _usable_grad  # dash.autograd needs the loaded library

    _library.require_library()
    fai._check_tensors(func, q, k, v, rank=q.dim())
    scale = fai._default_scale(q.shape[-1]) if scale is None else float(scale)
    # Read when the backward runs (as FA3's registration does): under torch.compile this is
    # the compiled graph's run time, so flipping the flag needs no recompilation.
    deterministic = torch.are_deterministic_algorithms_enabled()
    dout = _usable_grad(dout)
    q, k, v, out = (fai._last_dim_contiguous(t) for t in (q, k, v, out))
    if cu_seq_q is None and cu_seq_k is None:
        grads = torch.ops.dash.attn_bwd(dout, q, k, v, out, lse.contiguous(), scale, causal, deterministic,
                                        _sm_margin(), "auto", None, None, *window)
    else:
        if cu_seq_q is None or cu_seq_k is None:
            raise ValueError(f"dash {func}: a variable-length call needs both cu_seq_q and cu_seq_k")
        grads = torch.ops.dash.attn_varlen_bwd(dout, q, k, v, out, lse.contiguous(), cu_seq_q, cu_seq_k, None, None,
                                               int(max_q), int(max_k), scale, causal, deterministic, _sm_margin(),
                                               "auto", None, None, *window)
    return grads


def _heads_second(*tensors):
    # SDPA's (batch, heads, seqlen, d) <-> FA3's (batch, seqlen, heads, d): views, no copies.
    return tuple(t.transpose(1, 2) for t in tensors)


# --- the kernels: signatures are the aten schemas (torch.ops.aten.<op>.<overload>._schema) ---

def _sdpa_forward(query, key, value, dropout_p=0.0, is_causal=False, return_debug_mask=False, *, scale=None):
    _reject(_SDPA, dropout_p, return_debug_mask)
    q, k, v = _heads_second(query, key, value)
    out, lse = _forward(_SDPA, q, k, v, None, None, None, None, scale, bool(is_causal))
    rng_state, philox_offset, debug_mask = _no_rng(query)
    return (_in_layout_of(out.transpose(1, 2), query), lse, None, None, query.shape[2], key.shape[2], rng_state,
            philox_offset, debug_mask)


def _sdpa_forward_quantized(query, key, value, q_descale, k_descale, v_descale, dropout_p=0.0, is_causal=False,
                            return_debug_mask=False, *, scale=None):
    fai._check_options(_SDPA, q_descale=q_descale, k_descale=k_descale, v_descale=v_descale)
    return _sdpa_forward(query, key, value, dropout_p, is_causal, return_debug_mask, scale=scale)


def _sdpa_backward(grad_out, query, key, value, out, logsumexp, cum_seq_q, cum_seq_k, max_q, max_k, dropout_p,
                   is_causal, philox_seed, philox_offset, *, scale=None):
    _reject(_SDPA_BWD, dropout_p)
    dout, q, k, v, o = _heads_second(grad_out, query, key, value, out)
    grads = _backward(_SDPA_BWD, dout, q, k, v, o, logsumexp, None, None, max_q, max_k, scale, bool(is_causal))
    return tuple(_in_layout_of(g.transpose(1, 2), like) for g, like in zip(grads, (query, key, value)))


def _flash_forward(query, key, value, cum_seq_q, cum_seq_k, max_q, max_k, dropout_p, is_causal, return_debug_mask,
                   *, scale=None, window_size_left=None, window_size_right=None, seqused_k=None, alibi_slopes=None):
    _reject(_FLASH, dropout_p, return_debug_mask, alibi_slopes)
    out, lse = _forward(_FLASH, query, key, value, cum_seq_q, cum_seq_k, max_q, max_k, scale, bool(is_causal), seqused_k,
                        _window(window_size_left, window_size_right))
    return (_in_layout_of(out, query), lse, *_no_rng(query))


def _flash_forward_quantized(query, key, value, cum_seq_q, cum_seq_k, max_q, max_k, dropout_p, is_causal,
                             return_debug_mask, q_descale, k_descale, v_descale, *, scale=None, window_size_left=None,
                             window_size_right=None, seqused_k=None, alibi_slopes=None):
    fai._check_options(_FLASH, q_descale=q_descale, k_descale=k_descale, v_descale=v_descale)
    return _flash_forward(query, key, value, cum_seq_q, cum_seq_k, max_q, max_k, dropout_p, is_causal,
                          return_debug_mask, scale=scale, window_size_left=window_size_left,
                          window_size_right=window_size_right, seqused_k=seqused_k, alibi_slopes=alibi_slopes)


def _flash_backward(grad_out, query, key, value, out, logsumexp, cum_seq_q, cum_seq_k, max_q, max_k, dropout_p,
                    is_causal, rng_state, unused, *, scale=None, window_size_left=None, window_size_right=None):
    _reject(_FLASH_BWD, dropout_p)
    grads = _backward(_FLASH_BWD, grad_out, query, key, value, out, logsumexp, cum_seq_q, cum_seq_k, max_q, max_k,
                      scale, bool(is_causal), _window(window_size_left, window_size_right))
    return tuple(_in_layout_of(g, like) for g, like in zip(grads, (query, key, value)))
