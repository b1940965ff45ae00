"""Test doubles for the dash ops: CPU stand-ins for the kernels, for testing the Python
layers (autograd formula, flash_attn_interface, torch.compile) end to end without a GPU,
and a spy that records which flags reach the ops.

Inside `reference_kernels()` the CPU registrations of dash::attn_fwd and dash::attn_bwd
compute plain-PyTorch attention (dash.reference, fp32 arithmetic, with the call's sliding
window and softcap) instead of raising "needs a CUDA device", and every call's non-tensor
arguments are recorded (window_left / window_right / softcap as the op received them). On
exit the override is removed and the real (raising) CPU registrations are back. CUDA is
untouched.

`DashCallSpy` records the dash ops that reach the dispatcher below autograd, on any
device (a TorchDispatchMode): the GPU tests use it to see which `deterministic` flag the
backward really got.
"""
import contextlib
import dataclasses
import warnings

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from dash import reference


@dataclasses.dataclass
class Call:
    op: str
    softmax_scale: float
    causal: bool
    deterministic: bool
    sm_margin: int
    schedule: str
    shapes: tuple
    window_left: int = -1
    window_right: int = -1
    softcap: float = 0.0

    @property
    def window(self) -> tuple:
        return (self.window_left, self.window_right)


def _fwd(calls):
    def attn_fwd(q, k, v, softmax_scale, causal, deterministic=False, sm_margin=0, schedule="auto", window_left=-1,
                 window_right=-1, softcap=0.0):
        calls.append(Call("attn_fwd", softmax_scale, causal, deterministic, sm_margin, schedule,
                          (tuple(q.shape), tuple(k.shape), tuple(v.shape)), window_left, window_right, softcap))
        assert q.stride(-1) == 1 and k.stride(-1) == 1 and v.stride(-1) == 1
        out, lse = reference.attention_forward(q, k, v, softmax_scale, causal, compute_dtype=torch.float32,
                                               window_size=(window_left, window_right), softcap=softcap)
        return out.contiguous(), lse.contiguous()
    return attn_fwd


def _backward_from_lse(dout, q, k, v, out, lse, softmax_scale, causal):
    """The kernels' backward as they compute it: P from the given LSE and D from the given
    out (fp32), so a call over a subset of the keys gives that subset's share of the full
    gradients (what ring attention relies on). No window or softcap."""
    k, v, group = reference._expand_kv(q, k, v)
    qh, kh, vh, doh, oh = reference._heads_first(q, k, v, dout, out, dtype=torch.float32)
    scores = (qh @ kh.transpose(-1, -2)) * softmax_scale
    if causal:
        scores = scores.masked_fill(reference.causal_mask(q.shape[1], k.shape[1], q.device), float("-inf"))
    probs = torch.exp(scores - lse.float()[..., None])
    dv = probs.transpose(-1, -2) @ doh
    ds = probs * (doh @ vh.transpose(-1, -2) - (doh * oh).sum(dim=-1, keepdim=True))
    dq = (ds @ kh) * softmax_scale
    dk = (ds.transpose(-1, -2) @ qh) * softmax_scale
    return (dq.transpose(1, 2), reference._reduce_group(dk.transpose(1, 2), group),
            reference._reduce_group(dv.transpose(1, 2), group))


def _bwd(calls, from_lse=False):
    def attn_bwd(dout, q, k, v, out, softmax_lse, softmax_scale, causal, deterministic, sm_margin=0,
                 schedule="auto", dq_trace=None, dq_trace_count=None, window_left=-1, window_right=-1, softcap=0.0):
        calls.append(Call("attn_bwd", softmax_scale, causal, deterministic, sm_margin, schedule,
                          (tuple(q.shape), tuple(k.shape), tuple(v.shape)), window_left, window_right, softcap))
        assert dout.stride(-1) == 1, "the autograd formula must hand attn_bwd a unit last-dim stride"
        if from_lse:
            assert (window_left, window_right, softcap) == (-1, -1, 0.0), "from_lse: no window or softcap"
            grads = _backward_from_lse(dout, q, k, v, out, softmax_lse, softmax_scale, causal)
        else:
            grads = reference.attention_backward(dout, q, k, v, softmax_scale, causal, compute_dtype=torch.float32,
                                                 window_size=(window_left, window_right), softcap=softcap)
        return tuple(g.to(q.dtype).contiguous() for g in grads)
    return attn_bwd


def _varlen_fwd(calls):
    def attn_varlen_fwd(q, k, v, cu_seqlens_q, cu_seqlens_k, seqused_q, seqused_k, max_seqlen_q, max_seqlen_k,
                        softmax_scale, causal, deterministic=False, sm_margin=0, schedule="auto", window_left=-1,
                        window_right=-1, softcap=0.0):
        calls.append(Call("attn_varlen_fwd", softmax_scale, causal, deterministic, sm_margin, schedule,
                          (tuple(q.shape), tuple(k.shape), tuple(v.shape)), window_left, window_right, softcap))
        out, lse = reference.attention_varlen_forward(q, k, v, cu_seqlens_q, cu_seqlens_k, softmax_scale, causal,
                                                      torch.float32, seqused_q, seqused_k,
                                                      window_size=(window_left, window_right), softcap=softcap)
        return out.contiguous(), lse.contiguous()
    return attn_varlen_fwd


def _varlen_backward_from_lse(dout, q, k, v, out, lse, cu_seqlens_q, cu_seqlens_k, softmax_scale, causal):
    """_backward_from_lse per document of a packing (lse: (heads, total_q)); every row used."""
    grads = [torch.zeros(t.shape, dtype=torch.float32) for t in (q, k, v)]
    bq, bk = cu_seqlens_q.tolist(), cu_seqlens_k.tolist()
    for (q0, q1), (k0, k1) in zip(zip(bq, bq[1:]), zip(bk, bk[1:])):
        if q1 == q0 or k1 == k0:
            continue
        dq, dk, dv = _backward_from_lse(dout[None, q0:q1], q[None, q0:q1], k[None, k0:k1], v[None, k0:k1],
                                        out[None, q0:q1], lse[None, :, q0:q1], softmax_scale, causal)
        grads[0][q0:q1], grads[1][k0:k1], grads[2][k0:k1] = dq[0], dk[0], dv[0]
    return grads


def _varlen_bwd(calls, from_lse=False):
    def attn_varlen_bwd(dout, q, k, v, out, softmax_lse, cu_seqlens_q, cu_seqlens_k, seqused_q, seqused_k,
                        max_seqlen_q, max_seqlen_k, softmax_scale, causal, deterministic, sm_margin=0,
                        schedule="auto", dq_trace=None, dq_trace_count=None, window_left=-1, window_right=-1,
                        softcap=0.0):
        calls.append(Call("attn_varlen_bwd", softmax_scale, causal, deterministic, sm_margin, schedule,
                          (tuple(q.shape), tuple(k.shape), tuple(v.shape)), window_left, window_right, softcap))
        if from_lse:
            assert seqused_q is None and seqused_k is None and (window_left, window_right) == (-1, -1) and not softcap
            grads = _varlen_backward_from_lse(dout, q, k, v, out, softmax_lse, cu_seqlens_q, cu_seqlens_k,
                                              softmax_scale, causal)
            return tuple(g.to(q.dtype).contiguous() for g in grads)
        grads = reference.attention_varlen_backward(dout, q, k, v, cu_seqlens_q, cu_seqlens_k, softmax_scale,
                                                    causal, torch.float32, seqused_q, seqused_k,
                                                    window_size=(window_left, window_right), softcap=softcap)
        return tuple(g.to(q.dtype).contiguous() for g in grads)
    return attn_varlen_bwd


@contextlib.contextmanager
def reference_kernels(backward_from_lse=False):
    """Yields the list of recorded Calls. backward_from_lse: attn_bwd and attn_varlen_bwd take P
    from the LSE and D from the out they are given, as the kernels do (_backward_from_lse),
    instead of recomputing both from q, k, v."""
    calls = []
    lib = torch.library.Library("dash", "IMPL")
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*Overriding a previously registered kernel.*")
            warnings.filterwarnings("ignore", message=".*Warning only once for all operators.*")
            lib.impl("attn_fwd", _fwd(calls), "CPU")
            lib.impl("attn_bwd", _bwd(calls, backward_from_lse), "CPU")
            lib.impl("attn_varlen_fwd", _varlen_fwd(calls), "CPU")
            lib.impl("attn_varlen_bwd", _varlen_bwd(calls, backward_from_lse), "CPU")
        yield calls
    finally:
        lib._destroy()


class DashCallSpy(TorchDispatchMode):
    """Records (op name, deterministic) of every dash.attn_fwd / dash.attn_bwd call."""

    def __init__(self):
        super().__init__()
        self.calls = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is torch.ops.dash.attn_fwd.default:
            self.calls.append(("attn_fwd", bool(kwargs.get("deterministic", args[5] if len(args) > 5 else False))))
        elif func is torch.ops.dash.attn_bwd.default:
            self.calls.append(("attn_bwd", bool(kwargs.get("deterministic", args[8]))))
        elif func is torch.ops.dash.attn_varlen_fwd.default:
            self.calls.append(("attn_varlen_fwd", bool(kwargs.get("deterministic", args[11] if len(args) > 11
                                                                  else False))))
        elif func is torch.ops.dash.attn_varlen_bwd.default:
            self.calls.append(("attn_varlen_bwd", bool(kwargs.get("deterministic", args[14]))))
        return func(*args, **kwargs)

    def flags(self, op):
        return [det for name, det in self.calls if name == op]
