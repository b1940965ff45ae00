"""CPU: packed (variable-length) batches through the Python layers: the drop-in's
flash_attn_varlen_func / flash_attn_varlen_qkvpacked_func and the autograd formula of
attn_varlen_fwd end to end with plain-PyTorch stand-ins for the kernels (per-sequence
reference), argument validation of the varlen ops, and fake-tensor / torch.compile tracing."""
import itertools

import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

import dash
from conftest import requires_library
from op_test_doubles import reference_kernels
from dash import flash_attn_interface as fai
from dash import reference

pytestmark = requires_library

LENGTHS = [0, 1, 17, 130, 0, 64, 5]


def _packed(lengths_q=LENGTHS, lengths_k=None, heads=4, heads_kv=2, head_dim=64, dtype=torch.bfloat16, seed=0,
            requires_grad=False):
    lengths_k = lengths_q if lengths_k is None else lengths_k
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(sum(lengths_q), heads, head_dim, generator=gen, dtype=dtype)
    k = torch.randn(sum(lengths_k), heads_kv, head_dim, generator=gen, dtype=dtype)
    v = torch.randn(sum(lengths_k), heads_kv, head_dim, generator=gen, dtype=dtype)
    cu_q = torch.tensor([0, *itertools.accumulate(lengths_q)], dtype=torch.int32)
    cu_k = torch.tensor([0, *itertools.accumulate(lengths_k)], dtype=torch.int32)
    if requires_grad:
        q, k, v = (t.requires_grad_() for t in (q, k, v))
    return q, k, v, cu_q, cu_k, max(lengths_q), max(lengths_k)


@pytest.mark.parametrize("causal", [False, True])
def test_varlen_func_forward_and_backward_through_the_ops(causal):
    q, k, v, cu_q, cu_k, mq, mk = _packed(lengths_k=[3, 1, 40, 130, 2, 64, 0], requires_grad=True)
    with reference_kernels() as calls:
        out, lse = fai.flash_attn_varlen_func(q, k, v, cu_q, cu_k, mq, mk, causal=causal, deterministic=True,
                                              return_attn_probs=True)
        out.float().square().sum().backward()
    assert [c.op for c in calls] == ["attn_varlen_fwd", "attn_varlen_bwd"]
    assert calls[1].deterministic and lse.shape == (q.shape[1], q.shape[0])
    ref_out, ref_lse = reference.attention_varlen_forward(q.detach(), k.detach(), v.detach(), cu_q, cu_k,
                                                          causal=causal)
    assert torch.allclose(out.float(), ref_out.float(), atol=1e-2)
    assert torch.equal(torch.isinf(lse), torch.isinf(ref_lse))
    for t in (q, k, v):
        assert t.grad is not None and t.grad.shape == t.shape


def test_varlen_qkvpacked_splits_and_returns_gradients_in_layout():
    total, heads = sum(LENGTHS), 4
    qkv = torch.randn(total, 3, heads, 64, dtype=torch.bfloat16, requires_grad=True)
    cu = torch.tensor([0, *itertools.accumulate(LENGTHS)], dtype=torch.int32)
    with reference_kernels() as calls:
        out = fai.flash_attn_varlen_qkvpacked_func(qkv, cu, max(LENGTHS), causal=True)
        out.sum().backward()
    assert out.shape == (total, heads, 64) and qkv.grad.shape == qkv.shape
    assert calls[0].shapes == (((total, heads, 64),) * 3)
    gqa = torch.randn(total, 4 + 2 * 2, 64, dtype=torch.bfloat16)
    with reference_kernels() as calls:
        fai.flash_attn_varlen_qkvpacked_func(gqa, cu, max(LENGTHS), num_heads_q=4)
    assert calls[0].shapes == ((total, 4, 64), (total, 2, 64), (total, 2, 64))


def test_deterministic_flag_follows_the_global_setting():
    q, k, v, cu_q, cu_k, mq, mk = _packed(requires_grad=True)
    with reference_kernels() as calls:
        torch.use_deterministic_algorithms(True)
        try:
            fai.flash_attn_varlen_func(q, k, v, cu_q, cu_k, mq, mk).sum().backward()
        finally:
            torch.use_deterministic_algorithms(False)
    assert calls[1].op == "attn_varlen_bwd" and calls[1].deterministic


def _call_fwd(q, k, v, cu_q, cu_k, mq, mk, **kw):
    return torch.ops.dash.attn_varlen_fwd(q, k, v, cu_q, cu_k, kw.get("seqused_q"), kw.get("seqused_k"), mq, mk,
                                          0.125, False)


@pytest.mark.parametrize("change,error,match", [
    (lambda a: a.update(cu_q=a["cu_q"].long()), TypeError, "cu_seqlens_q must be int32"),
    (lambda a: a.update(cu_k=a["cu_k"][:-1]), ValueError, "cu_seqlens_k must be 1-D with 8 entries"),
    (lambda a: a.update(cu_q=a["cu_q"][:1], cu_k=a["cu_k"][:1]), ValueError, "batch \\+ 1 >= 2"),
    (lambda a: a.update(q=a["q"][None]), ValueError, "must be 3-D"),
    (lambda a: a.update(k=a["k"][:, :1].repeat(1, 3, 1), v=a["v"][:, :1].repeat(1, 3, 1)), ValueError,
     "multiple of the 3 heads"),
    (lambda a: a.update(v=a["v"][:, :1]), ValueError, "k and v must have the same rows and heads"),
    (lambda a: a.update(mq=-1), ValueError, "max_seqlen_q and max_seqlen_k must be >= 0"),
    (lambda a: a.update(seqused_q=torch.zeros(3, dtype=torch.int32)), ValueError, "seqused_q must be 1-D"),
    (lambda a: a.update(q=a["q"].float()), TypeError, "supported dtypes"),
])
def test_varlen_argument_validation(change, error, match):
    q, k, v, cu_q, cu_k, mq, mk = _packed()
    args = dict(q=q, k=k, v=v, cu_q=cu_q, cu_k=cu_k, mq=mq, mk=mk)
    change(args)
    kw = {n: args.pop(n) for n in ("seqused_q", "seqused_k") if n in args}
    with pytest.raises(error, match=match):
        _call_fwd(*args.values(), **kw)


def test_valid_cpu_call_asks_for_cuda():
    with pytest.raises(RuntimeError, match="CUDA device"):
        _call_fwd(*_packed())


def test_fake_tensors_and_compile_trace_the_varlen_ops():
    q, k, v, cu_q, cu_k, mq, mk = _packed()
    with FakeTensorMode() as mode:
        fq, fk, fv, fcu_q, fcu_k = (mode.from_tensor(t) for t in (q, k, v, cu_q, cu_k))
        out, lse = torch.ops.dash.attn_varlen_fwd(fq, fk, fv, fcu_q, fcu_k, None, None, mq, mk, 0.125, True)
        assert out.shape == q.shape and lse.shape == (q.shape[1], q.shape[0]) and lse.dtype == torch.float32
        grads = torch.ops.dash.attn_varlen_bwd(out, fq, fk, fv, out, lse, fcu_q, fcu_k, None, None, mq, mk, 0.125,
                                               True, True)
        assert [g.shape for g in grads] == [q.shape, k.shape, v.shape]

    def step(q, k, v, cu_q, cu_k):
        return fai.flash_attn_varlen_func(q, k, v, cu_q, cu_k, mq, mk, causal=True).float().square().sum()

    q, k, v, *_ = _packed(requires_grad=True)
    compiled = torch.compile(step, fullgraph=True, backend="aot_eager")
    with reference_kernels():
        loss = compiled(q, k, v, cu_q, cu_k)
        loss.backward()
        eager_q = q.detach().clone().requires_grad_()
        step(eager_q, k.detach(), v.detach(), cu_q, cu_k).backward()
    assert torch.allclose(q.grad.float(), eager_q.grad.float(), atol=1e-2)
