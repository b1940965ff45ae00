"""dash behind torch.nn.attention's flash-attention registry (dash.integrations.torch_attention).

CPU: the registry mechanics (activate puts dash's kernels on aten's CUDA dispatch key,
restore takes them off), and the path torch's dispatcher takes, with the same kernels
installed on the CPU key (aten has none of these ops there) and recording CPU stand-ins for
the dash ops: aten._scaled_dot_product_flash_attention (what SDPA's flash backend runs),
varlen_attn and aten._flash_attention_forward, forward and backward through aten's own
autograd formulas; the arguments dash receives (sliding windows included: aten's
window_size_left / window_size_right reach dash as they are); the layouts returned (those
aten's meta kernels promise); NotImplementedError, before any dash call, for what dash
lacks; the backward's deterministic flag following torch.use_deterministic_algorithms at
backward time.
GPU (Hopper): F.scaled_dot_product_attention (flash backend) and varlen_attn (also with
sliding windows) run dash (bitwise equal to dash's own entry points), match an fp64
reference, and give bitwise identical gradients over 20 runs under
torch.use_deterministic_algorithms(True).
"""
import contextlib
import dataclasses
import warnings

import pytest
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.nn.attention.varlen import AuxRequest, varlen_attn

import dash
from conftest import requires_hopper, requires_library
from dash import _traits, reference
from dash.flash_attn_interface import flash_attn_func, flash_attn_varlen_func
from dash.integrations import torch_attention as ta
from gpu_helpers import assert_close_fa_style, check_against_reference, make_inputs

pytestmark = requires_library

OPS = ("aten::_scaled_dot_product_flash_attention", "aten::_scaled_dot_product_flash_attention.quantized",
       "aten::_scaled_dot_product_flash_attention_backward", "aten::_flash_attention_forward",
       "aten::_flash_attention_forward.quantized", "aten::_flash_attention_backward")


# --- CPU stand-ins ------------------------------------------------------------------------

@dataclasses.dataclass
class Call:
    op: str
    args: dict


def _reference_op(op, calls):
    """A CPU kernel for dash::<op> that records its arguments by schema name and computes
    plain-PyTorch attention in fp32."""
    names = [a.name for a in getattr(torch.ops.dash, op).default._schema.arguments]

    def kernel(*args, **kwargs):
        a = dict(zip(names, args), **kwargs)
        calls.append(Call(op, a))
        scale, causal = a["softmax_scale"], a["causal"]
        mask = dict(window_size=(a.get("window_left", -1), a.get("window_right", -1)), softcap=a.get("softcap", 0.0))
        f32 = torch.float32
        if op == "attn_fwd":
            out, lse = reference.attention_forward(a["q"], a["k"], a["v"], scale, causal, f32, **mask)
        elif op == "attn_varlen_fwd":
            out, lse = reference.attention_varlen_forward(a["q"], a["k"], a["v"], a["cu_seqlens_q"], a["cu_seqlens_k"],
                                                          scale, causal, f32, a["seqused_q"], a["seqused_k"],
                                                          **mask)
        elif op == "attn_bwd":
            grads = reference.attention_backward(a["dout"], a["q"], a["k"], a["v"], scale, causal, f32,
                                                 **mask)
        else:
            grads = reference.attention_varlen_backward(a["dout"], a["q"], a["k"], a["v"], a["cu_seqlens_q"],
                                                        a["cu_seqlens_k"], scale, causal, f32, a["seqused_q"],
                                                        a["seqused_k"], **mask)
        if op.endswith("fwd"):
            return out.contiguous(), lse.contiguous()
        return tuple(g.to(a["q"].dtype).contiguous() for g in grads)
    return kernel


@contextlib.contextmanager
def dash_on_cpu():
    """dash's aten kernels on the CPU key, the dash ops computing on CPU; yields the Calls."""
    calls = []
    handle = ta._install_kernels("CPU")
    lib = torch.library.Library("dash", "IMPL")
    try:
        with warnings.catch_warnings():
            # Replacing the library's CPU kernels (which raise "needs a CUDA device") is the point.
            warnings.filterwarnings("ignore", message=".*Overriding a previously registered kernel.*")
            warnings.filterwarnings("ignore", message=".*Warning only once for all operators.*")
            for op in ("attn_fwd", "attn_bwd", "attn_varlen_fwd", "attn_varlen_bwd"):
                lib.impl(op, _reference_op(op, calls), "CPU")
        yield calls
    finally:
        lib._destroy()
        handle.remove()


@pytest.fixture
def cpu_dash():
    with dash_on_cpu() as calls:
        yield calls


@pytest.fixture
def torch_registry():
    """Leaves torch.nn.attention's registry with no active impl, whatever the test did."""
    yield torch.nn.attention
    torch.nn.attention.restore_flash_attention_impl(_raise_warn=False)


def _cuda_kernel(op):
    return next(line for line in torch._C._dispatch_dump_table(op).splitlines() if line.startswith("CUDA:"))


def _meta_like(t):
    return torch.empty_strided(t.shape, t.stride(), dtype=t.dtype, device="meta")


def _randn(*shape, dtype=torch.bfloat16, seed=0, requires_grad=True):
    t = torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(dtype)
    return t.requires_grad_(requires_grad)


def _sdpa_inputs(batch, heads, heads_kv, seqlen_q, seqlen_k, head_dim, dtype, layout):
    """q, k, v as SDPA takes them, (batch, heads, seqlen, d): a transposed view of a
    (batch, seqlen, heads, d) tensor as models make them, or contiguous."""
    def make(seqlen, h, seed):
        if layout == "bshd":
            return _randn(batch, seqlen, h, head_dim, dtype=dtype, seed=seed).detach().transpose(1, 2).requires_grad_()
        return _randn(batch, h, seqlen, head_dim, dtype=dtype, seed=seed)
    return make(seqlen_q, heads, 1), make(seqlen_k, heads_kv, 2), make(seqlen_k, heads_kv, 3)


def _assert_close(name, ours, ref, tol):
    err = (ours.double() - ref.double()).abs().max().item()
    assert err <= tol * max(ref.abs().max().item(), 1.0), f"{name}: max error {err:.3e}"


def _bhsd_reference(q, k, v, dout, scale, causal):
    """fp64 (out, lse, dq, dk, dv) for (batch, heads, seqlen, d) inputs."""
    q_, k_, v_, do_ = (t.detach().transpose(1, 2) for t in (q, k, v, dout))
    out, lse = reference.attention_forward(q_, k_, v_, scale, causal, torch.float64)
    grads = reference.attention_backward(do_, q_, k_, v_, scale, causal, torch.float64)
    return (out.transpose(1, 2), lse, *(g.transpose(1, 2) for g in grads))


# --- the registry ---------------------------------------------------------------------------

def test_register_adds_dash_to_torch_registry(torch_registry):
    assert ta.register() == "DASH"
    assert "DASH" in torch_registry.list_flash_attention_impls()


def test_activate_overrides_the_cuda_kernels_and_restore_puts_them_back(torch_registry):
    before = {op: _cuda_kernel(op) for op in OPS}
    ta.activate()
    assert torch_registry.current_flash_attention_impl() == "DASH"
    for op in OPS:
        assert "torch_attention.py" in _cuda_kernel(op), f"{op}: {_cuda_kernel(op)}"
    ta.activate()  # again: torch removes the active impl first, no duplicate-registration error
    torch_registry.restore_flash_attention_impl()
    assert torch_registry.current_flash_attention_impl() is None
    assert {op: _cuda_kernel(op) for op in OPS} == before


def test_activation_without_the_op_library_raises(torch_registry, monkeypatch):
    monkeypatch.setattr(dash._library, "LOADED", False)
    monkeypatch.setattr(dash._library, "_load_error", "dash's op library is not built")
    before = _cuda_kernel(OPS[0])
    with pytest.raises(RuntimeError, match="not built"):
        ta.activate()
    assert torch_registry.current_flash_attention_impl() is None
    assert _cuda_kernel(OPS[0]) == before


# --- SDPA's flash op -----------------------------------------------------------------------

@pytest.mark.parametrize("layout", ["bshd", "bhsd"])
@pytest.mark.parametrize("heads,heads_kv", [(4, 4), (4, 2), (4, 1)], ids=["mha", "gqa", "mqa"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("head_dim,dtype", [(64, torch.float16), (128, torch.bfloat16)], ids=["d64-fp16", "d128-bf16"])
def test_sdpa_flash_op_runs_dash(cpu_dash, head_dim, dtype, causal, heads, heads_kv, layout):
    seqlen_q, seqlen_k = 37, 37 if causal else 53
    q, k, v = _sdpa_inputs(2, heads, heads_kv, seqlen_q, seqlen_k, head_dim, dtype, layout)
    scale = 0.3
    res = torch.ops.aten._scaled_dot_product_flash_attention(q, k, v, 0.0, causal, False, scale=scale)
    meta = torch.ops.aten._scaled_dot_product_flash_attention(*map(_meta_like, (q, k, v)), 0.0, causal, False,
                                                             scale=scale)
    out, lse = res[0], res[1]
    assert res[2] is None and res[3] is None and (res[4], res[5]) == (seqlen_q, seqlen_k)
    for ours, promised in zip(res, meta):
        if isinstance(ours, torch.Tensor):
            assert (ours.shape, ours.stride(), ours.dtype) == (promised.shape, promised.stride(), promised.dtype)

    (fwd,) = cpu_dash
    assert fwd.op == "attn_fwd"
    assert fwd.args["q"].shape == (2, seqlen_q, heads, head_dim)  # FA3's layout, k / v with their own heads
    assert fwd.args["k"].shape == fwd.args["v"].shape == (2, seqlen_k, heads_kv, head_dim)
    assert (fwd.args["softmax_scale"], fwd.args["causal"]) == (scale, causal)

    dout = _randn(*out.shape, dtype=dtype, seed=4, requires_grad=False)
    out.backward(dout)
    ref_out, ref_lse, *ref_grads = _bhsd_reference(q, k, v, dout, scale, causal)
    _assert_close("out", out, ref_out, 2e-2)
    _assert_close("lse", lse, ref_lse, 1e-4)
    bwd = cpu_dash[1]
    assert bwd.op == "attn_bwd" and (bwd.args["softmax_scale"], bwd.args["causal"]) == (scale, causal)
    assert bwd.args["softmax_lse"].shape == (2, heads, seqlen_q)
    for name, t, ref in zip(("dq", "dk", "dv"), (q, k, v), ref_grads):
        assert t.grad.stride() == torch.empty_like(t).stride(), f"{name} not in {name[1]}'s layout"
        _assert_close(name, t.grad, ref, 3e-2)


def test_sdpa_default_scale_is_head_dim_rsqrt(cpu_dash):
    q, k, v = _sdpa_inputs(1, 2, 2, 16, 16, 64, torch.bfloat16, "bhsd")
    torch.ops.aten._scaled_dot_product_flash_attention(q, k, v)
    assert cpu_dash[0].args["softmax_scale"] == 64 ** -0.5


# --- varlen_attn and _flash_attention_forward ----------------------------------------------

def _packed(lengths_q, lengths_k, heads, heads_kv, head_dim, dtype):
    cu_q = torch.tensor([0, *torch.tensor(lengths_q).cumsum(0).tolist()], dtype=torch.int32)
    cu_k = torch.tensor([0, *torch.tensor(lengths_k).cumsum(0).tolist()], dtype=torch.int32)
    q = _randn(int(cu_q[-1]), heads, head_dim, dtype=dtype, seed=5)
    k = _randn(int(cu_k[-1]), heads_kv, head_dim, dtype=dtype, seed=6)
    v = _randn(int(cu_k[-1]), heads_kv, head_dim, dtype=dtype, seed=7)
    return q, k, v, cu_q, cu_k, max(lengths_q), max(lengths_k)


@pytest.mark.parametrize("heads_kv", [4, 2, 1], ids=["mha", "gqa", "mqa"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("head_dim,dtype", [(64, torch.float16), (128, torch.bfloat16)], ids=["d64-fp16", "d128-bf16"])
def test_varlen_attn_runs_dash(cpu_dash, head_dim, dtype, causal, heads_kv):
    # An empty sequence, and keys longer than queries (the causal mask is bottom-right aligned).
    q, k, v, cu_q, cu_k, max_q, max_k = _packed([17, 0, 43, 11], [20, 5, 43, 30], 4, heads_kv, head_dim, dtype)
    out, lse = varlen_attn(q, k, v, cu_q, cu_k, max_q, max_k, window_size=(-1, 0) if causal else (-1, -1),
                           return_aux=AuxRequest(lse=True))
    fwd = cpu_dash[0]
    assert fwd.op == "attn_varlen_fwd"
    assert torch.equal(fwd.args["cu_seqlens_q"], cu_q) and torch.equal(fwd.args["cu_seqlens_k"], cu_k)
    assert (fwd.args["max_seqlen_q"], fwd.args["max_seqlen_k"]) == (max_q, max_k)
    assert fwd.args["seqused_q"] is None and fwd.args["seqused_k"] is None
    assert (fwd.args["softmax_scale"], fwd.args["causal"]) == (head_dim ** -0.5, causal)
    assert out.shape == q.shape and lse.shape == (4, q.shape[0]) and lse.dtype == torch.float32

    dout = _randn(*out.shape, dtype=dtype, seed=8, requires_grad=False)
    out.backward(dout)
    ref_out, ref_lse = reference.attention_varlen_forward(q.detach(), k.detach(), v.detach(), cu_q, cu_k, None,
                                                          causal, torch.float64)
    ref_grads = reference.attention_varlen_backward(dout, q.detach(), k.detach(), v.detach(), cu_q, cu_k, None, causal,
                                                    torch.float64)
    _assert_close("out", out, ref_out, 2e-2)
    assert torch.allclose(lse, ref_lse.float(), atol=1e-4, rtol=0)
    bwd = cpu_dash[1]
    assert bwd.op == "attn_varlen_bwd" and bwd.args["causal"] == causal
    assert (bwd.args["max_seqlen_q"], bwd.args["max_seqlen_k"]) == (max_q, max_k)
    for name, t, ref in zip(("dq", "dk", "dv"), (q, k, v), ref_grads):
        assert t.grad.shape == t.shape
        _assert_close(name, t.grad, ref, 3e-2)


def test_flash_attention_forward_dense_is_bottom_right_causal(cpu_dash):
    """aten._flash_attention_forward with (batch, seqlen, heads, d) and no cu_seq: dash's
    fixed-length op, causal aligned bottom-right as in FlashAttention, through aten's
    autograd formula into _flash_attention_backward."""
    q = _randn(2, 20, 4, 64, seed=9)
    k = _randn(2, 45, 2, 64, seed=10)
    v = _randn(2, 45, 2, 64, seed=11)
    out, lse, rng_state, _, debug_mask = torch.ops.aten._flash_attention_forward(q, k, v, None, None, 20, 45, 0.0,
                                                                                True, False)
    assert lse.shape == (2, 4, 20) and rng_state.dtype == torch.uint64 and debug_mask.numel() == 0
    dout = _randn(*out.shape, seed=12, requires_grad=False)
    out.backward(dout)
    assert [c.op for c in cpu_dash] == ["attn_fwd", "attn_bwd"] and cpu_dash[1].args["causal"] is True
    ref_out, _ = reference.attention_forward(q.detach(), k.detach(), v.detach(), None, True, torch.float64)
    _assert_close("out", out, ref_out, 2e-2)
    ref_grads = reference.attention_backward(dout, q.detach(), k.detach(), v.detach(), None, True, torch.float64)
    for name, t, ref in zip(("dq", "dk", "dv"), (q, k, v), ref_grads):
        _assert_close(name, t.grad, ref, 3e-2)


def test_seqused_k_without_gradients_runs_dash(cpu_dash):
    q, k, v, cu_q, cu_k, max_q, max_k = _packed([9, 14], [12, 20], 2, 2, 64, torch.bfloat16)
    q, k, v = (t.detach() for t in (q, k, v))
    used = torch.tensor([7, 20], dtype=torch.int32)
    out = torch.ops.aten._flash_attention_forward(q, k, v, cu_q, cu_k, max_q, max_k, 0.0, False, False,
                                                  seqused_k=used)[0]
    assert torch.equal(cpu_dash[0].args["seqused_k"], used)
    ref, _ = reference.attention_varlen_forward(q, k, v, cu_q, cu_k, None, False, torch.float64, seqused_k=used)
    _assert_close("out", out, ref, 2e-2)


# --- determinism and sm_margin ---------------------------------------------------------------

@pytest.mark.parametrize("entry", ["sdpa", "varlen"])
@pytest.mark.parametrize("flag_at_backward", [False, True])
def test_backward_determinism_follows_torch_flag(cpu_dash, deterministic_algorithms, entry, flag_at_backward):
    """The flag is read when the backward runs (as FA3's registration reads it), so a
    forward under one setting and a backward under the other gets the backward's."""
    deterministic_algorithms(not flag_at_backward)
    if entry == "sdpa":
        q, k, v = _sdpa_inputs(1, 2, 1, 24, 24, 64, torch.bfloat16, "bshd")
        out = torch.ops.aten._scaled_dot_product_flash_attention(q, k, v, 0.0, True)[0]
    else:
        q, k, v, cu_q, cu_k, max_q, max_k = _packed([10, 14], [10, 14], 2, 1, 64, torch.bfloat16)
        out = varlen_attn(q, k, v, cu_q, cu_k, max_q, max_k, window_size=(-1, 0))
    deterministic_algorithms(flag_at_backward)
    out.backward(torch.ones_like(out))
    (bwd,) = [c for c in cpu_dash if c.op.endswith("bwd")]
    assert bwd.args["deterministic"] is flag_at_backward


def test_sm_carveout_is_dashs_sm_margin(cpu_dash):
    q, k, v = _sdpa_inputs(1, 2, 2, 16, 16, 64, torch.bfloat16, "bshd")
    torch._C._set_sm_carveout_experimental(12)
    try:
        torch.ops.aten._scaled_dot_product_flash_attention(q, k, v)[0].sum().backward()
    finally:
        torch._C._set_sm_carveout_experimental(None)
    assert [(c.op, c.args["sm_margin"]) for c in cpu_dash] == [("attn_fwd", 12), ("attn_bwd", 12)]


# --- sliding windows ------------------------------------------------------------------------

def _window_args(call):
    # Arguments equal to their schema defaults may not reach a Python kernel: absent means -1.
    return (call.args.get("window_left", -1), call.args.get("window_right", -1))


@pytest.mark.parametrize("window_size", [(8, 0), (-1, 4), (3, 3), (0, 0), (100, 100)], ids=str)
@pytest.mark.parametrize("heads_kv", [4, 1], ids=["mha", "mqa"])
def test_varlen_attn_sliding_window_runs_dash(cpu_dash, heads_kv, window_size):
    """varlen_attn's window_size reaches both dash ops as aten's window_size_left / right
    (causal only for (-1, 0)); out and the gradients are the windowed reference's."""
    q, k, v, cu_q, cu_k, max_q, max_k = _packed([17, 0, 43, 11], [20, 5, 43, 30], 4, heads_kv, 64, torch.bfloat16)
    out, lse = varlen_attn(q, k, v, cu_q, cu_k, max_q, max_k, window_size=window_size,
                           return_aux=AuxRequest(lse=True))
    dout = _randn(*out.shape, seed=8, requires_grad=False)
    out.backward(dout)
    assert [(c.op, c.args["causal"], _window_args(c)) for c in cpu_dash] == [
        ("attn_varlen_fwd", False, window_size), ("attn_varlen_bwd", False, window_size)]
    args = (q.detach(), k.detach(), v.detach(), cu_q, cu_k, None, False, torch.float64)
    ref_out, ref_lse = reference.attention_varlen_forward(*args, window_size=window_size)
    _assert_close("out", out, ref_out, 2e-2)
    finite = torch.isfinite(ref_lse)
    assert torch.equal(torch.isfinite(lse), finite)
    assert torch.allclose(lse[finite], ref_lse[finite].float(), atol=1e-4, rtol=0)
    ref_grads = reference.attention_varlen_backward(dout, *args, window_size=window_size)
    for name, t, ref in zip(("dq", "dk", "dv"), (q, k, v), ref_grads):
        _assert_close(name, t.grad, ref, 3e-2)


def test_flash_attention_forward_dense_with_window(cpu_dash):
    """aten._flash_attention_forward without cu_seq and with a window: dash's fixed-length
    op gets the window, and aten's autograd formula hands it to the backward."""
    q = _randn(2, 20, 4, 64, seed=9)
    k = _randn(2, 45, 2, 64, seed=10)
    v = _randn(2, 45, 2, 64, seed=11)
    out = torch.ops.aten._flash_attention_forward(q, k, v, None, None, 20, 45, 0.0, True, False,
                                                  window_size_left=6, window_size_right=0)[0]
    dout = _randn(*out.shape, seed=12, requires_grad=False)
    out.backward(dout)
    assert [(c.op, c.args["causal"], _window_args(c)) for c in cpu_dash] == [("attn_fwd", True, (6, 0)),
                                                                             ("attn_bwd", True, (6, 0))]
    ref_out, _ = reference.attention_forward(q.detach(), k.detach(), v.detach(), None, True, torch.float64,
                                             window_size=(6, 0))
    _assert_close("out", out, ref_out, 2e-2)
    ref_grads = reference.attention_backward(dout, q.detach(), k.detach(), v.detach(), None, True, torch.float64,
                                             window_size=(6, 0))
    for name, t, ref in zip(("dq", "dk", "dv"), (q, k, v), ref_grads):
        _assert_close(name, t.grad, ref, 3e-2)


def test_flash_attention_backward_with_window(cpu_dash):
    call = _flash_backward(window_size_left=3, window_size_right=0)
    dq, dk, dv = call()
    (bwd,) = cpu_dash
    assert bwd.op == "attn_varlen_bwd" and _window_args(bwd) == (3, 0) and bwd.args.get("softcap", 0.0) == 0.0
    assert dq.shape == (16, 2, 64) and dk.shape == dv.shape == (16, 2, 64)


def test_no_window_reaches_dash_as_minus_one(cpu_dash):
    """aten passes no window as None (SDPA) or -1 (varlen_attn): dash gets (-1, -1)."""
    q, k, v = _sdpa_inputs(1, 2, 2, 16, 16, 64, torch.bfloat16, "bshd")
    torch.ops.aten._scaled_dot_product_flash_attention(q, k, v, 0.0, True)
    _varlen()()
    assert [_window_args(c) for c in cpu_dash] == [(-1, -1), (-1, -1)]


# --- what dash does not run -----------------------------------------------------------------

def _sdpa(**kw):
    head_dim = kw.pop("head_dim", 64)
    dtype = kw.pop("dtype", torch.bfloat16)
    q, k, v = _sdpa_inputs(1, 2, 2, 16, 16, head_dim, dtype, "bshd")
    return lambda: torch.ops.aten._scaled_dot_product_flash_attention(q, k, v, **kw)


def _sdpa_quantized(**kw):
    q, k, v = _sdpa_inputs(1, 2, 2, 16, 16, 64, torch.bfloat16, "bshd")
    return lambda: torch.ops.aten._scaled_dot_product_flash_attention.quantized(q, k, v, **kw)


def _varlen(**kw):
    q, k, v, cu_q, cu_k, max_q, max_k = _packed([10, 6], [10, 6], 2, 2, 64, torch.bfloat16)
    return lambda: varlen_attn(q, k, v, cu_q, cu_k, max_q, max_k, **kw)


def _flash(dense=False, requires_grad=True, dropout_p=0.0, **kw):
    q, k, v, cu_q, cu_k, max_q, max_k = _packed([10, 6], [10, 6], 2, 2, 64, torch.bfloat16)
    if dense:
        q, k, v = (t.detach().view(1, 16, 2, 64) for t in (q, k, v))
        cu_q = cu_k = None
    q.requires_grad_(requires_grad)
    return lambda: torch.ops.aten._flash_attention_forward(q, k, v, cu_q, cu_k, max_q, max_k, dropout_p, False, False,
                                                          **kw)


def _flash_backward(dropout_p=0.0, **kw):
    q, k, v, cu_q, cu_k, max_q, max_k = _packed([10, 6], [10, 6], 2, 2, 64, torch.bfloat16)
    lse = torch.zeros(2, 16)
    rng = torch.zeros(2, dtype=torch.uint64)
    return lambda: torch.ops.aten._flash_attention_backward(q, q, k, v, q, lse, cu_q, cu_k, max_q, max_k, dropout_p,
                                                           False, rng, torch.empty(0), **kw)


def _sdpa_backward():
    q, k, v = _sdpa_inputs(1, 2, 2, 16, 16, 64, torch.bfloat16, "bhsd")
    lse = torch.zeros(1, 2, 16)
    seed, offset = torch.zeros(2, dtype=torch.uint64), torch.zeros((), dtype=torch.uint64)
    return lambda: torch.ops.aten._scaled_dot_product_flash_attention_backward(q, q, k, v, q, lse, None, None, 16, 16,
                                                                              0.1, False, seed, offset)


UNSUPPORTED = {
    "sdpa-dropout": (lambda: _sdpa(dropout_p=0.1), "dropout_p"),
    "sdpa-debug-mask": (lambda: _sdpa(return_debug_mask=True), "return_debug_mask"),
    "sdpa-head-dim-100": (lambda: _sdpa(head_dim=100), "head_dim"),
    "sdpa-fp32": (lambda: _sdpa(dtype=torch.float32), "dtype"),
    "sdpa-negative-scale": (lambda: _sdpa(scale=-1.0), "softmax_scale"),
    "sdpa-fp8-descale": (lambda: _sdpa_quantized(q_descale=torch.ones(1, 2), k_descale=None, v_descale=None),
                         "q_descale"),
    "sdpa-backward-dropout": (_sdpa_backward, "dropout_p"),
    "flash-dropout": (lambda: _flash(dropout_p=0.1), "dropout_p"),
    "flash-alibi": (lambda: _flash(alibi_slopes=torch.ones(2)), "alibi_slopes"),
    "flash-seqused-k-with-grad": (lambda: _flash(seqused_k=torch.tensor([5, 6], dtype=torch.int32)), "seqused_k"),
    "flash-seqused-k-dense": (lambda: _flash(dense=True, requires_grad=False,
                                             seqused_k=torch.tensor([5], dtype=torch.int32)), "seqused_k"),
    "flash-backward-dropout": (lambda: _flash_backward(dropout_p=0.2), "dropout_p"),
}


@pytest.mark.parametrize("case", list(UNSUPPORTED))
def test_unsupported_arguments_raise_before_any_dash_call(cpu_dash, case):
    make, argument = UNSUPPORTED[case]
    call = make()
    with pytest.raises(NotImplementedError, match=argument) as info:
        call()
    assert "not supported by dash" in str(info.value)
    assert cpu_dash == []


# --- GPU: F.scaled_dot_product_attention and varlen_attn on Hopper ----------------------------

@pytest.fixture
def dash_active(torch_registry, monkeypatch):
    """DASH activated; yields how often its forward and backward ran (the kernels look
    _forward / _backward up in the module when they run, so the counting wrappers see
    eager and compiled calls alike)."""
    runs = {"forward": 0, "backward": 0}

    def counting(name, inner):
        def wrapper(*args, **kwargs):
            runs[name] += 1
            return inner(*args, **kwargs)
        return wrapper
    monkeypatch.setattr(ta, "_forward", counting("forward", ta._forward))
    monkeypatch.setattr(ta, "_backward", counting("backward", ta._backward))
    ta.activate()
    yield runs
    torch_registry.restore_flash_attention_impl()


# Every head dim with a backward whose v has q / k's head dim, from the trait table: the door checks nothing per
# head dim, so each runs its own kernels through it (192 with v's 128 is not tested through this door).
DOOR_HEAD_DIMS = [qk for qk, v in _traits.HEAD_DIMS if qk == v and (qk, v) in _traits.BWD_TILE]


def _gpu_sdpa_inputs(heads, heads_kv, seqlen, head_dim, dtype, seed=0):
    return make_inputs(2, seqlen, seqlen, heads, head_dim, dtype, causal=False, seed=seed, heads_kv=heads_kv)


def _sdpa_fwd_bwd(inputs, causal):
    """F.scaled_dot_product_attention on (batch, heads, seqlen, d) views of the
    (batch, seqlen, heads, d) inputs, flash backend only; (out, grads) in FA3's layout."""
    q, k, v = (inputs[n].detach().clone().requires_grad_() for n in ("q", "k", "v"))
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        out = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                             is_causal=causal, enable_gqa=k.shape[2] != q.shape[2])
    out.backward(inputs["dout"].transpose(1, 2))
    return out.transpose(1, 2), (q.grad, k.grad, v.grad)


@requires_hopper
@pytest.mark.parametrize("heads,heads_kv", [(8, 8), (8, 2)], ids=["mha", "gqa"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("head_dim", DOOR_HEAD_DIMS)
def test_gpu_sdpa_flash_backend_runs_dash(dash_active, head_dim, causal, heads, heads_kv):
    inputs = _gpu_sdpa_inputs(heads, heads_kv, 1000, head_dim, torch.bfloat16, seed=head_dim + causal)
    out, grads = _sdpa_fwd_bwd(inputs, causal)
    assert dash_active == {"forward": 1, "backward": 1}
    assert torch.equal(out, flash_attn_func(inputs["q"], inputs["k"], inputs["v"], causal=causal)), \
        "SDPA's output is not dash's"
    check_against_reference(inputs, causal, grads, torch.bfloat16)


def _gpu_packed(heads, heads_kv, head_dim, dtype, seed=0):
    lengths = [300, 1, 517, 0, 1029]
    cu = torch.tensor([0, *torch.tensor(lengths).cumsum(0).tolist()], dtype=torch.int32, device="cuda")
    gen = torch.Generator(device="cuda").manual_seed(seed)
    total = int(cu[-1])
    q = torch.randn(total, heads, head_dim, generator=gen, device="cuda", dtype=dtype)
    k = torch.randn(total, heads_kv, head_dim, generator=gen, device="cuda", dtype=dtype)
    v = torch.randn(total, heads_kv, head_dim, generator=gen, device="cuda", dtype=dtype)
    dout = torch.randn(total, heads, head_dim, generator=gen, device="cuda", dtype=dtype)
    return q, k, v, dout, cu, max(lengths)


def _varlen_fwd_bwd(q, k, v, dout, cu, longest, causal):
    q, k, v = (t.detach().clone().requires_grad_() for t in (q, k, v))
    out = varlen_attn(q, k, v, cu, cu, longest, longest, window_size=(-1, 0) if causal else (-1, -1))
    out.backward(dout)
    return out, (q.grad, k.grad, v.grad)


@requires_hopper
@pytest.mark.parametrize("heads,heads_kv", [(8, 8), (8, 2)], ids=["mha", "gqa"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("head_dim", DOOR_HEAD_DIMS)
def test_gpu_varlen_attn_runs_dash(dash_active, head_dim, causal, heads, heads_kv):
    q, k, v, dout, cu, longest = _gpu_packed(heads, heads_kv, head_dim, torch.bfloat16, seed=head_dim + causal)
    out, grads = _varlen_fwd_bwd(q, k, v, dout, cu, longest, causal)
    assert dash_active == {"forward": 1, "backward": 1}
    assert torch.equal(out, flash_attn_varlen_func(q, k, v, cu, cu, longest, longest, causal=causal)), \
        "varlen_attn's output is not dash's"
    ref_out, _ = reference.attention_varlen_forward(q, k, v, cu, cu, None, causal, torch.float64)
    pt_out, _ = reference.attention_varlen_forward(q, k, v, cu, cu, None, causal, torch.bfloat16)
    assert_close_fa_style("out", out, ref_out.double(), pt_out, torch.bfloat16)
    ref = reference.attention_varlen_backward(dout, q, k, v, cu, cu, None, causal, torch.float64)
    pt = reference.attention_varlen_backward(dout, q, k, v, cu, cu, None, causal, torch.bfloat16)
    for name, ours, r, p in zip(("dq", "dk", "dv"), grads, ref, pt):
        assert_close_fa_style(name, ours, r, p, torch.bfloat16)


@requires_hopper
@pytest.mark.parametrize("window_size", [(64, 0), (100, 100), (0, 257)], ids=str)
@pytest.mark.parametrize("heads,heads_kv", [(8, 8), (8, 2)], ids=["mha", "gqa"])
def test_gpu_varlen_attn_sliding_window_runs_dash(dash_active, heads, heads_kv, window_size):
    q, k, v, dout, cu, longest = _gpu_packed(heads, heads_kv, 128, torch.bfloat16, seed=sum(window_size))
    leaves = [t.detach().clone().requires_grad_() for t in (q, k, v)]
    out = varlen_attn(*leaves, cu, cu, longest, longest, window_size=window_size)
    out.backward(dout)
    assert dash_active == {"forward": 1, "backward": 1}
    assert torch.equal(out, flash_attn_varlen_func(q, k, v, cu, cu, longest, longest, window_size=window_size))
    ref_out, _ = reference.attention_varlen_forward(q, k, v, cu, cu, None, False, torch.float64,
                                                    window_size=window_size)
    pt_out, _ = reference.attention_varlen_forward(q, k, v, cu, cu, None, False, torch.bfloat16,
                                                   window_size=window_size)
    assert_close_fa_style("out", out, ref_out.double(), pt_out, torch.bfloat16)
    ref = reference.attention_varlen_backward(dout, q, k, v, cu, cu, None, False, torch.float64,
                                              window_size=window_size)
    pt = reference.attention_varlen_backward(dout, q, k, v, cu, cu, None, False, torch.bfloat16,
                                             window_size=window_size)
    for name, leaf, r, p in zip(("dq", "dk", "dv"), leaves, ref, pt):
        assert_close_fa_style(name, leaf.grad, r, p, torch.bfloat16)


REPEATS = 20


@requires_hopper
@pytest.mark.parametrize("entry", ["sdpa", "varlen"])
def test_gpu_gradients_bitwise_reproducible_under_deterministic_algorithms(dash_active, deterministic_algorithms,
                                                                           entry):
    """20 backward passes under torch.use_deterministic_algorithms(True): bitwise equal to
    each other and to dash's own deterministic=True backward."""
    if entry == "sdpa":
        inputs = _gpu_sdpa_inputs(16, 4, 2048, 128, torch.bfloat16, seed=5)
        run = lambda: _sdpa_fwd_bwd(inputs, True)  # noqa: E731

        def direct():
            q, k, v = (inputs[n].detach().clone().requires_grad_() for n in ("q", "k", "v"))
            flash_attn_func(q, k, v, causal=True, deterministic=True).backward(inputs["dout"])
            return q.grad, k.grad, v.grad
    else:
        q, k, v, dout, cu, longest = _gpu_packed(16, 4, 128, torch.bfloat16, seed=5)
        run = lambda: _varlen_fwd_bwd(q, k, v, dout, cu, longest, True)  # noqa: E731

        def direct():
            leaves = [t.detach().clone().requires_grad_() for t in (q, k, v)]
            flash_attn_varlen_func(*leaves, cu, cu, longest, longest, causal=True, deterministic=True).backward(dout)
            return tuple(t.grad for t in leaves)
    expected = direct()
    deterministic_algorithms(True)
    for i in range(REPEATS):
        _, grads = run()
        for name, a, b in zip(("dq", "dk", "dv"), grads, expected):
            assert torch.equal(a, b), f"{name} differs from dash's deterministic backward at run {i}"


@requires_hopper
@pytest.mark.parametrize("entry", ["sdpa-bshd", "sdpa-bhsd", "varlen"])
def test_gpu_torch_compile_runs_dash(dash_active, deterministic_algorithms, entry):
    """torch.compile (inductor) calls the same kernels at run time: out and gradients
    bitwise equal to eager (both with the ordered backward), so the layouts dash returns
    are the ones aten's meta kernels promised the compiled graph."""
    torch._dynamo.reset()
    if entry == "varlen":
        q, k, v, dout, cu, longest = _gpu_packed(8, 2, 128, torch.bfloat16, seed=7)

        def attention(q, k, v):
            return varlen_attn(q, k, v, cu, cu, longest, longest, window_size=(-1, 0))
    else:
        inputs = _gpu_sdpa_inputs(8, 2, 512, 128, torch.bfloat16, seed=7)
        q, k, v, dout = (inputs[n].transpose(1, 2) for n in ("q", "k", "v", "dout"))
        if entry == "sdpa-bhsd":
            q, k, v, dout = (t.contiguous() for t in (q, k, v, dout))

        def attention(q, k, v):
            return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)

    def run(fn):
        leaves = [t.detach().clone().requires_grad_() for t in (q, k, v)]
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            out = fn(*leaves)
        out.backward(dout)
        return out, [t.grad for t in leaves]
    deterministic_algorithms(True)
    eager_out, eager_grads = run(attention)
    compiled_out, compiled_grads = run(torch.compile(attention, fullgraph=True))
    assert dash_active == {"forward": 2, "backward": 2}
    assert compiled_out.stride() == eager_out.stride()
    assert torch.equal(compiled_out, eager_out)
    for name, a, b in zip(("dq", "dk", "dv"), compiled_grads, eager_grads):
        assert torch.equal(a, b), f"{name}: compiled differs from eager"
