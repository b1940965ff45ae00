"""CPU: dash.flash_attn_interface, the FlashAttention-3 drop-in.

Signatures against FlashAttention-3's, every NotImplementedError path, the patched
`import flash_attn_interface`, which `deterministic` flag reaches the kernels, and sliding
windows (window_size reaching both kernels of every entry point; malformed ones: ValueError). The
end-to-end tests run the Python layers (interface, autograd formula, torch.compile) on
CPU with plain-PyTorch stand-ins for the kernels (tests/op_test_doubles.py); the
kernels themselves are tested on the GPU (test_flash_attn_interface_gpu.py)."""
import inspect
import itertools
import sys

import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.proxy_tensor import make_fx

import dash
from conftest import requires_library
from op_test_doubles import DashCallSpy, reference_kernels
from dash import flash_attn_interface as fai
from dash import reference

pytestmark = requires_library

# FlashAttention-3 (Dao-AILab/flash-attention, hopper/flash_attn_interface.py): parameter
# names in order, with their defaults, except `deterministic`, whose default dash makes
# None (FlashAttention-3: False).
FA3_SIGNATURES = {
    "flash_attn_func": [
        ("q", None), ("k", None), ("v", None), ("softmax_scale", None), ("causal", False), ("qv", None),
        ("q_descale", None), ("k_descale", None), ("v_descale", None), ("window_size", (-1, -1)),
        ("attention_chunk", 0), ("softcap", 0.0), ("num_splits", 1), ("pack_gqa", None), ("deterministic", None),
        ("sm_margin", 0), ("return_attn_probs", False)],
    "flash_attn_qkvpacked_func": [
        ("qkv", None), ("softmax_scale", None), ("causal", False), ("q_descale", None), ("k_descale", None),
        ("v_descale", None), ("window_size", (-1, -1)), ("attention_chunk", 0), ("softcap", 0.0),
        ("deterministic", None), ("num_heads_q", None), ("sm_margin", 0), ("return_attn_probs", False)],
    "flash_attn_varlen_func": [
        ("q", None), ("k", None), ("v", None), ("cu_seqlens_q", None), ("cu_seqlens_k", None),
        ("max_seqlen_q", None), ("max_seqlen_k", None), ("seqused_q", None), ("seqused_k", None),
        ("softmax_scale", None), ("causal", False), ("qv", None), ("q_descale", None), ("k_descale", None),
        ("v_descale", None), ("window_size", (-1, -1)), ("attention_chunk", 0), ("softcap", 0.0),
        ("num_splits", 1), ("pack_gqa", None), ("deterministic", None), ("sm_margin", 0),
        ("return_attn_probs", False)],
    # FlashAttention-3's hopper interface has no varlen qkvpacked function: dash's follows its
    # flash_attn_qkvpacked_func with flash_attn_varlen_func's cu_seqlens / max_seqlen.
    "flash_attn_varlen_qkvpacked_func": [
        ("qkv", None), ("cu_seqlens", None), ("max_seqlen", None), ("softmax_scale", None), ("causal", False),
        ("q_descale", None), ("k_descale", None), ("v_descale", None), ("window_size", (-1, -1)),
        ("attention_chunk", 0), ("softcap", 0.0), ("deterministic", None), ("num_heads_q", None), ("sm_margin", 0),
        ("return_attn_probs", False)],
}
FA3_SIGNATURES["_flash_attn_forward"] = [
    ("q", None), ("k", None), ("v", None), ("k_new", None), ("v_new", None), ("qv", None), ("out_", None),
    ("cu_seqlens_q", None), ("cu_seqlens_k", None), ("cu_seqlens_k_new", None), ("seqused_q", None),
    ("seqused_k", None), ("max_seqlen_q", None), ("max_seqlen_k", None), ("page_table", None),
    ("kv_batch_idx", None), ("leftpad_k", None), ("rotary_cos", None), ("rotary_sin", None),
    ("seqlens_rotary", None), ("q_descale", None), ("k_descale", None), ("v_descale", None),
    ("softmax_scale", None), ("causal", False), ("window_size_left", -1), ("window_size_right", -1),
    ("attention_chunk", 0), ("softcap", 0.0), ("rotary_interleaved", True), ("scheduler_metadata", None),
    ("num_splits", 1), ("pack_gqa", None), ("sm_margin", 0)]
FA3_SIGNATURES["_flash_attn_backward"] = [  # "sequed" is FlashAttention-3's spelling
    ("dout", None), ("q", None), ("k", None), ("v", None), ("out", None), ("softmax_lse", None),
    ("cu_seqlens_q", None), ("cu_seqlens_k", None), ("sequed_q", None), ("sequed_k", None),
    ("max_seqlen_q", None), ("max_seqlen_k", None), ("dq", None), ("dk", None), ("dv", None),
    ("softmax_scale", None), ("is_causal", False), ("window_size_left", -1), ("window_size_right", -1),
    ("softcap", 0.0), ("deterministic", False), ("sm_margin", 0)]
REQUIRED = {"q", "k", "v", "qkv", "dout", "out", "softmax_lse", "cu_seqlens_q", "cu_seqlens_k", "max_seqlen_q", "max_seqlen_k", "cu_seqlens",
            "max_seqlen"}


@pytest.mark.parametrize("name", sorted(FA3_SIGNATURES))
def test_signature_matches_flash_attention_3(name):
    params = list(inspect.signature(getattr(fai, name)).parameters.values())
    assert [p.name for p in params] == [n for n, _ in FA3_SIGNATURES[name]]
    # The private entry points take cu_seqlens / max_seqlen as optional keywords.
    required = REQUIRED - ({"cu_seqlens_q", "cu_seqlens_k", "max_seqlen_q", "max_seqlen_k"}
                           if name.startswith("_") else set())
    for param, (pname, default) in zip(params, FA3_SIGNATURES[name]):
        if pname in required:
            assert param.default is inspect.Parameter.empty, pname
        else:
            assert param.default == default, pname


def _qkv(batch=2, seqlen_q=37, seqlen_k=37, heads=3, head_dim=64, dtype=torch.bfloat16, requires_grad=False,
         seed=0):
    gen = torch.Generator().manual_seed(seed)
    tensors = [torch.randn(batch, s, heads, head_dim, generator=gen).to(dtype)
               for s in (seqlen_q, seqlen_k, seqlen_k)]
    return [t.requires_grad_(requires_grad) for t in tensors]


# --- NotImplementedError for everything dash does not run ------------------------------

UNSUPPORTED_OPTIONS = [
    ("attention_chunk", 1024),
    ("num_splits", 0),
    ("num_splits", 4),
    ("q_descale", torch.ones(2, 3)),
    ("k_descale", torch.ones(2, 3)),
    ("v_descale", torch.ones(2, 3)),
    ("qv", torch.zeros(2, 37, 3, 64)),
]


@pytest.mark.parametrize("argument,value", UNSUPPORTED_OPTIONS, ids=[f"{a}={v!r}"[:40] for a, v in UNSUPPORTED_OPTIONS])
def test_flash_attn_func_rejects_unsupported_options(argument, value):
    q, k, v = _qkv()
    with pytest.raises(NotImplementedError, match=rf"flash_attn_func: {argument}="):
        fai.flash_attn_func(q, k, v, **{argument: value})


QKVPACKED_OPTIONS = [(a, v) for a, v in UNSUPPORTED_OPTIONS if a not in ("num_splits", "pack_gqa", "qv")]


@pytest.mark.parametrize("argument,value", QKVPACKED_OPTIONS, ids=[f"{a}={v!r}"[:40] for a, v in QKVPACKED_OPTIONS])
def test_qkvpacked_rejects_unsupported_options(argument, value):
    qkv = torch.stack(_qkv(), dim=2)
    with pytest.raises(NotImplementedError, match=rf"flash_attn_qkvpacked_func: {argument}="):
        fai.flash_attn_qkvpacked_func(qkv, **{argument: value})


def test_unsupported_options_name_the_value():
    q, k, v = _qkv()
    with pytest.raises(NotImplementedError, match=r"q_descale=Tensor\(shape=\(2, 3\)"):
        fai.flash_attn_func(q, k, v, q_descale=torch.ones(2, 3))


def test_default_valued_options_are_accepted():
    """Explicit default values (and the equivalent list / False forms) reach the kernel."""
    q, k, v = _qkv()
    with reference_kernels() as calls:
        fai.flash_attn_func(q, k, v, window_size=[-1, -1], attention_chunk=0, softcap=0.0, num_splits=1,
                            pack_gqa=False, qv=None, q_descale=None, k_descale=None, v_descale=None)
    assert [c.op for c in calls] == ["attn_fwd"]


@pytest.mark.parametrize("heads_q,heads_k", [(4, 2), (4, 1), (6, 3), (8, 8)])
@pytest.mark.parametrize("pack_gqa", [None, False, True])
def test_gqa_mqa_reach_the_kernels(heads_q, heads_k, pack_gqa):
    """GQA / MQA head counts go to the ops as they are (k, v keep their heads); pack_gqa is
    a speed hint FlashAttention-3 takes and dash accepts."""
    q, _, _ = _qkv(heads=heads_q)
    _, k, v = _qkv(heads=heads_k)
    with reference_kernels() as calls:
        out = fai.flash_attn_func(q, k, v, pack_gqa=pack_gqa)
    assert out.shape == q.shape
    assert calls[0].shapes == (tuple(q.shape), tuple(k.shape), tuple(v.shape))


def test_gqa_heads_must_divide():
    q, _, _ = _qkv(heads=6)
    _, k, v = _qkv(heads=4)
    with pytest.raises(ValueError, match="multiple of the 4 heads"):
        fai.flash_attn_func(q, k, v)


def test_qkvpacked_gqa():
    """A 4-D qkv packing 4 query and 2 K/V heads splits into GQA q, k, v."""
    qkv = torch.randn(2, 37, 4 + 2 * 2, 64, dtype=torch.bfloat16)
    with reference_kernels() as calls:
        out = fai.flash_attn_qkvpacked_func(qkv, num_heads_q=4)
    assert out.shape == (2, 37, 4, 64)
    assert calls[0].shapes == ((2, 37, 4, 64), (2, 37, 2, 64), (2, 37, 2, 64))


@pytest.mark.parametrize("head_dim", [32, 100, 160, 512])
def test_unsupported_head_dim(head_dim):
    with pytest.raises(NotImplementedError, match=rf"head_dim={head_dim}.*64, 96, 128, 192, 256"):
        fai.flash_attn_func(*_qkv(head_dim=head_dim))
    qkv = torch.zeros(1, 8, 3, 2, head_dim, dtype=torch.float16)
    with pytest.raises(NotImplementedError, match=rf"head_dim={head_dim}"):
        fai.flash_attn_qkvpacked_func(qkv)


def test_different_value_head_dim():
    q, k, _ = _qkv(head_dim=128)
    v = torch.zeros(2, 37, 3, 64, dtype=torch.bfloat16)
    with pytest.raises(NotImplementedError, match=r"head_dim_v=64"):
        fai.flash_attn_func(q, k, v)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float8_e4m3fn])
def test_unsupported_dtype(dtype):
    q, k, v = (t.to(dtype) for t in _qkv())
    with pytest.raises(NotImplementedError, match=r"q.dtype=torch.float"):
        fai.flash_attn_func(q, k, v)


@pytest.mark.parametrize("seqlen_q,seqlen_k", [(0, 5), (5, 0)])
def test_empty_sequences(seqlen_q, seqlen_k):
    with pytest.raises(NotImplementedError, match=r"seqlen_[qk]=0"):
        fai.flash_attn_func(*_qkv(seqlen_q=seqlen_q, seqlen_k=seqlen_k))


def test_non_positive_scale():
    with pytest.raises(NotImplementedError, match=r"softmax_scale=-0.5"):
        fai.flash_attn_func(*_qkv(), softmax_scale=-0.5)


def test_varlen_unsupported_options_raise():
    q = torch.zeros(10, 3, 64, dtype=torch.bfloat16)
    cu = torch.tensor([0, 4, 10], dtype=torch.int32)
    with pytest.raises(NotImplementedError, match=r"flash_attn_varlen_func: attention_chunk=64"):
        fai.flash_attn_varlen_func(q, q, q, cu, cu, 6, 6, window_size=(8, 0), attention_chunk=64)
    with pytest.raises(NotImplementedError, match=r"flash_attn_varlen_func: head_dim=100"):
        z = torch.zeros(10, 3, 100, dtype=torch.bfloat16)
        fai.flash_attn_varlen_func(z, z, z, cu, cu, 6, 6)


@pytest.mark.parametrize("name", ["flash_attn_with_kvcache", "flash_attn_combine", "get_scheduler_metadata"])
def test_inference_entry_points_raise(name):
    with pytest.raises(NotImplementedError, match=name):
        getattr(fai, name)(torch.zeros(1, 1, 1, 64))


def test_malformed_qkvpacked():
    with pytest.raises(ValueError, match="needs num_heads_q"):
        fai.flash_attn_qkvpacked_func(torch.zeros(2, 8, 6, 64, dtype=torch.bfloat16))
    with pytest.raises(ValueError, match=r"\(batch, seqlen, 3, heads, head_dim\)"):
        fai.flash_attn_qkvpacked_func(torch.zeros(2, 8, 2, 3, 64, dtype=torch.bfloat16))
    with pytest.raises(ValueError, match="not num_heads_q"):
        fai.flash_attn_qkvpacked_func(torch.zeros(2, 8, 7, 64, dtype=torch.bfloat16), num_heads_q=2)


def test_cpu_tensors_reach_the_op_device_error():
    with pytest.raises(RuntimeError, match="CUDA device"):
        fai.flash_attn_func(*_qkv())


# --- patch_flash_attn_interface ------------------------------------------------------

@pytest.fixture
def clean_flash_attn_interface():
    names = ("flash_attn_interface", "flash_attn_3", "flash_attn_3.flash_attn_interface")
    saved = {name: sys.modules.pop(name, None) for name in names}
    try:
        yield
    finally:
        for name in names:
            sys.modules.pop(name, None)
            if saved[name] is not None:
                sys.modules[name] = saved[name]


def test_patch_also_serves_the_flash_attn_3_package_path(clean_flash_attn_interface):
    """Megatron imports flash_attn_3.flash_attn_interface for the private entry points."""
    dash.patch_flash_attn_interface()
    from flash_attn_3.flash_attn_interface import _flash_attn_backward, _flash_attn_forward
    import flash_attn_3
    assert _flash_attn_forward is fai._flash_attn_forward and _flash_attn_backward is fai._flash_attn_backward
    assert flash_attn_3.flash_attn_interface is fai


def test_patch_makes_the_import_resolve_to_dash(clean_flash_attn_interface):
    module = dash.patch_flash_attn_interface()
    assert module is fai
    import flash_attn_interface
    from flash_attn_interface import flash_attn_func, flash_attn_qkvpacked_func, flash_attn_varlen_func
    assert flash_attn_interface is fai
    assert flash_attn_func is fai.flash_attn_func
    assert flash_attn_qkvpacked_func is fai.flash_attn_qkvpacked_func
    assert flash_attn_varlen_func is fai.flash_attn_varlen_func


def test_patch_is_idempotent(clean_flash_attn_interface):
    first = dash.patch_flash_attn_interface()
    second = dash.patch_flash_attn_interface()
    assert first is second is sys.modules["flash_attn_interface"]


def test_patch_replaces_an_already_imported_module(clean_flash_attn_interface):
    sys.modules["flash_attn_interface"] = type(sys)("flash_attn_interface")  # stands in for FA3
    dash.patch_flash_attn_interface()
    import flash_attn_interface
    assert flash_attn_interface.flash_attn_func is fai.flash_attn_func


# --- which deterministic flag reaches the kernels ------------------------------------

def _flags(calls):
    return [(c.op, c.deterministic) for c in calls]


@pytest.mark.parametrize("global_flag", [False, True])
@pytest.mark.parametrize("explicit", [None, False, True])
def test_deterministic_resolution(deterministic_algorithms, global_flag, explicit):
    deterministic_algorithms(global_flag)
    q, k, v = _qkv(requires_grad=True)
    with reference_kernels() as calls:
        fai.flash_attn_func(q, k, v, causal=True, deterministic=explicit).sum().backward()
    expected = global_flag if explicit is None else explicit
    assert _flags(calls) == [("attn_fwd", expected), ("attn_bwd", expected)]


def test_deterministic_is_read_at_call_time(deterministic_algorithms):
    """The flag in force when flash_attn_func runs decides, not the one at backward time."""
    q, k, v = _qkv(requires_grad=True)
    with reference_kernels() as calls:
        deterministic_algorithms(True)
        out = fai.flash_attn_func(q, k, v)
        deterministic_algorithms(False)
        out.sum().backward()
    assert _flags(calls) == [("attn_fwd", True), ("attn_bwd", True)]


def test_qkvpacked_deterministic_resolution(deterministic_algorithms):
    qkv = torch.stack(_qkv(), dim=2).requires_grad_()
    with reference_kernels() as calls:
        deterministic_algorithms(True)
        fai.flash_attn_qkvpacked_func(qkv).sum().backward()
        deterministic_algorithms(False)
        fai.flash_attn_qkvpacked_func(qkv).sum().backward()
        fai.flash_attn_qkvpacked_func(qkv, deterministic=True).sum().backward()
    assert [c.deterministic for c in calls if c.op == "attn_bwd"] == [True, False, True]


def test_spy_sees_the_flags_of_forward_and_backward(deterministic_algorithms):
    """DashCallSpy, which the GPU tests use as proof of the backward's mode, sees both ops,
    including the backward that autograd runs."""
    q, k, v = _qkv(requires_grad=True)
    with reference_kernels():
        spies = []
        for flag in (True, False):
            deterministic_algorithms(flag)
            spy = DashCallSpy()
            with spy:
                fai.flash_attn_func(q, k, v).sum().backward()
            spies.append(spy)
    assert [(s.flags("attn_fwd"), s.flags("attn_bwd")) for s in spies] == [([True], [True]), ([False], [False])]


def test_compiled_call_follows_the_global_flag(deterministic_algorithms):
    """Under torch.compile the flag is guarded: flipping it recompiles, and the kernels get
    the flag in force at each call."""
    @torch.compile(backend="aot_eager", fullgraph=True)
    def step(q, k, v):
        return fai.flash_attn_func(q, k, v, causal=True).float().square().sum()

    torch._dynamo.reset()
    q, k, v = _qkv(requires_grad=True)
    seen = []
    with reference_kernels() as calls:
        for flag in (False, True, False):
            deterministic_algorithms(flag)
            calls.clear()
            step(q, k, v).backward()
            seen.append(_flags(calls))
    torch._dynamo.reset()
    assert seen == [[("attn_fwd", f), ("attn_bwd", f)] for f in (False, True, False)]


# --- end to end on CPU stand-in kernels: the autograd plumbing -------------------------

def _reference_grads(q, k, v, dout, causal, scale=None):
    return reference.attention_backward(dout, q.detach(), k.detach(), v.detach(), scale, causal,
                                        compute_dtype=torch.float32)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("seqlen_q,seqlen_k", [(37, 37), (20, 45), (45, 20)])
def test_gradients_flow_to_q_k_v(causal, seqlen_q, seqlen_k):
    q, k, v = _qkv(seqlen_q=seqlen_q, seqlen_k=seqlen_k, requires_grad=True)
    dout = torch.randn(q.shape).to(q.dtype)
    with reference_kernels() as calls:
        out, lse = fai.flash_attn_func(q, k, v, softmax_scale=0.2, causal=causal, sm_margin=3,
                                       return_attn_probs=True)
        out.backward(dout)
    assert lse.shape == (2, 3, seqlen_q) and lse.dtype == torch.float32 and not lse.requires_grad
    for name, call in zip(("attn_fwd", "attn_bwd"), calls):
        assert (call.op, call.softmax_scale, call.causal, call.sm_margin) == (name, 0.2, causal, 3)
    for grad, expected in zip((q.grad, k.grad, v.grad), _reference_grads(q, k, v, dout, causal, 0.2)):
        assert grad.dtype == torch.bfloat16
        assert torch.equal(grad, expected.to(torch.bfloat16))


def test_default_scale_and_return_value():
    q, k, v = _qkv(head_dim=128)
    with reference_kernels() as calls:
        out = fai.flash_attn_func(q, k, v)
        pair = fai.flash_attn_func(q, k, v, return_attn_probs=True)
    assert isinstance(out, torch.Tensor) and out.shape == q.shape
    assert isinstance(pair, tuple) and len(pair) == 2 and torch.equal(pair[0], out)
    assert calls[0].softmax_scale == 128 ** -0.5


def test_expanded_output_gradient():
    """out.sum() hands backward an all-stride-0 gradient; attn_bwd gets a usable one."""
    q, k, v = _qkv(requires_grad=True)
    with reference_kernels():
        fai.flash_attn_func(q, k, v).sum().backward()
    expected = _reference_grads(q, k, v, torch.ones(q.shape, dtype=q.dtype), False)
    assert torch.equal(q.grad, expected[0].to(q.dtype))


def test_strided_last_dim_is_copied():
    """FlashAttention-3 copies inputs whose last dim is strided; so does the drop-in."""
    q, k, v = _qkv(head_dim=128)
    strided = torch.zeros(2, 37, 3, 128, 2, dtype=torch.bfloat16)
    strided[..., 0] = q
    q_strided = strided[..., 0]
    assert q_strided.stride(-1) != 1
    with reference_kernels():
        assert torch.equal(fai.flash_attn_func(q_strided, k, v), fai.flash_attn_func(q, k, v))


@pytest.mark.parametrize("layout", ["5d", "4d"])
def test_qkvpacked_matches_unpacked(layout):
    q, k, v = _qkv(seqlen_q=29, seqlen_k=29)
    packed = torch.stack((q, k, v), dim=2)
    if layout == "4d":
        packed = packed.reshape(2, 29, 9, 64)
    packed.requires_grad_()
    q1, k1, v1 = (t.clone().requires_grad_() for t in (q, k, v))
    dout = torch.randn(q.shape).to(q.dtype)
    with reference_kernels():
        out_packed = fai.flash_attn_qkvpacked_func(packed, causal=True, num_heads_q=3 if layout == "4d" else None)
        out_packed.backward(dout)
        out = fai.flash_attn_func(q1, k1, v1, causal=True)
        out.backward(dout)
    assert torch.equal(out_packed, out)
    expected = torch.stack((q1.grad, k1.grad, v1.grad), dim=2).reshape(packed.shape)
    assert packed.grad.shape == packed.shape and torch.equal(packed.grad, expected)


def test_torch_compile_fullgraph_forward_and_backward_match_eager():
    class Block(torch.nn.Module):
        def __init__(self, dim=128, heads=2):
            super().__init__()
            self.heads = heads
            self.qkv = torch.nn.Linear(dim, 3 * dim, bias=False)
            self.proj = torch.nn.Linear(dim, dim, bias=False)

        def forward(self, x):
            batch, seqlen, dim = x.shape
            qkv = self.qkv(x).view(batch, seqlen, 3, self.heads, dim // self.heads)
            out = fai.flash_attn_qkvpacked_func(qkv, causal=True, deterministic=True)
            return self.proj(out.reshape(batch, seqlen, dim))

    torch.manual_seed(0)
    model = Block().to(torch.bfloat16)
    x = torch.randn(2, 40, 128).to(torch.bfloat16)
    torch._dynamo.reset()
    compiled = torch.compile(model, backend="aot_eager", fullgraph=True)
    with reference_kernels() as calls:
        eager_out = model(x)
        eager_out.float().square().sum().backward()
        eager_grads = [p.grad.clone() for p in model.parameters()]
        model.zero_grad()
        calls.clear()
        compiled_out = compiled(x)
        compiled_out.float().square().sum().backward()
    torch._dynamo.reset()
    assert [c.op for c in calls] == ["attn_fwd", "attn_bwd"]
    assert torch.equal(compiled_out, eager_out)
    for p, g in zip(model.parameters(), eager_grads):
        assert torch.equal(p.grad, g)


def test_make_fx_of_flash_attn_func_with_fake_inputs():
    """No stand-ins: the fake implementations alone trace forward and backward."""
    def step(q, k, v):
        out = fai.flash_attn_func(q, k, v, causal=True, deterministic=True)
        return torch.autograd.grad(out.float().sum(), (q, k, v))

    mode = FakeTensorMode()
    with mode:
        args = [torch.empty(2, 64, 3, 128, dtype=torch.float16, requires_grad=True) for _ in range(3)]
    graph = make_fx(step, tracing_mode="fake")(*args)
    code = str(graph.code)
    assert "dash.attn_fwd" in code and "dash.attn_bwd" in code


def test_torch_compile_dynamic_shapes_one_graph_for_all_seqlens():
    """With dynamic shapes, new sequence lengths reuse the graph (head_dim specializes)."""
    from torch._dynamo.testing import CompileCounterWithBackend

    counter = CompileCounterWithBackend("aot_eager")

    @torch.compile(backend=counter, fullgraph=True, dynamic=True)
    def step(q, k, v):
        return fai.flash_attn_func(q, k, v, causal=True).float().square().sum()

    torch._dynamo.reset()
    with reference_kernels() as calls:
        for seqlen in (37, 50, 64):
            step(*_qkv(seqlen_q=seqlen, seqlen_k=seqlen, requires_grad=True)).backward()
    torch._dynamo.reset()
    assert counter.frame_count == 1
    assert [c.shapes[0][1] for c in calls if c.op == "attn_bwd"] == [37, 50, 64]
    assert all(c.softmax_scale == 0.125 for c in calls)


# --- sliding windows (window_size) ----------------------------------------------------------

WINDOWS = [(0, 0), (5, 0), (3, 7), (-1, 4), (6, -1), (-1, 0), (100, 100)]
ENTRY_POINTS = ["flash_attn_func", "flash_attn_qkvpacked_func", "flash_attn_varlen_func",
                "flash_attn_varlen_qkvpacked_func"]


def _call_entry(name, window_size):
    q, k, v = _qkv(seqlen_q=16, seqlen_k=16)
    cu = torch.tensor([0, 7, 16], dtype=torch.int32)
    if name == "flash_attn_func":
        return fai.flash_attn_func(q, k, v, window_size=window_size)
    if name == "flash_attn_qkvpacked_func":
        return fai.flash_attn_qkvpacked_func(torch.stack((q, k, v), dim=2), window_size=window_size)
    flat = [t.reshape(-1, 3, 64)[:16] for t in (q, k, v)]
    if name == "flash_attn_varlen_func":
        return fai.flash_attn_varlen_func(*flat, cu, cu, 9, 9, window_size=window_size)
    return fai.flash_attn_varlen_qkvpacked_func(torch.stack(flat, dim=1), cu, 9, window_size=window_size)


@pytest.mark.parametrize("window_size", [128, (1, 2, 3), [4], None, "ab"], ids=repr)
@pytest.mark.parametrize("name", ENTRY_POINTS)
def test_malformed_window_size_raises_value_error(name, window_size):
    with reference_kernels() as calls, pytest.raises(ValueError, match=rf"{name}: window_size must be a pair"):
        _call_entry(name, window_size)
    assert calls == []


@pytest.mark.parametrize("name", ENTRY_POINTS)
def test_every_entry_point_passes_the_window(name):
    with reference_kernels() as calls:
        _call_entry(name, [3, 0])
    assert len(calls) == 1 and calls[0].window == (3, 0) and calls[0].softcap == 0.0


@pytest.mark.parametrize("causal", [False, True], ids=["nocausal", "causal"])
@pytest.mark.parametrize("window_size", WINDOWS, ids=str)
@pytest.mark.parametrize("seqlen_q,seqlen_k", [(37, 37), (20, 45), (45, 20)])
def test_window_reaches_both_kernels_and_gradients_match(causal, window_size, seqlen_q, seqlen_k):
    """window_size goes to attn_fwd and (through the autograd formula) to attn_bwd as it was
    given; out and the gradients are the windowed reference's."""
    q, k, v = _qkv(seqlen_q=seqlen_q, seqlen_k=seqlen_k, requires_grad=True)
    dout = torch.randn(q.shape).to(q.dtype)
    with reference_kernels() as calls:
        out = fai.flash_attn_func(q, k, v, softmax_scale=0.2, causal=causal, window_size=window_size)
        out.backward(dout)
    assert [(c.op, c.causal, c.window) for c in calls] == [("attn_fwd", causal, window_size),
                                                           ("attn_bwd", causal, window_size)]
    ref_out, _ = reference.attention_forward(q.detach(), k.detach(), v.detach(), 0.2, causal,
                                             window_size=window_size)
    assert torch.equal(out, ref_out)
    expected = reference.attention_backward(dout, q.detach(), k.detach(), v.detach(), 0.2, causal,
                                            compute_dtype=torch.float32, window_size=window_size)
    for grad, e in zip((q.grad, k.grad, v.grad), expected):
        assert torch.equal(grad, e.to(torch.bfloat16))


def test_window_changes_the_result():
    """A window narrower than the sequence really masks (the stand-ins honour it)."""
    q, k, v = _qkv(seqlen_q=40, seqlen_k=40)
    with reference_kernels():
        full = fai.flash_attn_func(q, k, v, causal=True)
        windowed = fai.flash_attn_func(q, k, v, causal=True, window_size=(4, 0))
        wide = fai.flash_attn_func(q, k, v, causal=True, window_size=(39, 0))
    assert torch.equal(full[:, :5], windowed[:, :5]) and not torch.equal(full, windowed)
    assert torch.equal(full, wide)


@pytest.mark.parametrize("window_size", [(4, 0), (2, 3)])
@pytest.mark.parametrize("layout", ["5d", "4d"])
def test_qkvpacked_with_window_matches_unpacked(layout, window_size):
    q, k, v = _qkv(seqlen_q=29, seqlen_k=29)
    packed = torch.stack((q, k, v), dim=2)
    if layout == "4d":
        packed = packed.reshape(2, 29, 9, 64)
    packed.requires_grad_()
    q1, k1, v1 = (t.clone().requires_grad_() for t in (q, k, v))
    dout = torch.randn(q.shape).to(q.dtype)
    with reference_kernels() as calls:
        out_packed = fai.flash_attn_qkvpacked_func(packed, window_size=window_size,
                                                   num_heads_q=3 if layout == "4d" else None)
        out_packed.backward(dout)
        out = fai.flash_attn_func(q1, k1, v1, window_size=window_size)
        out.backward(dout)
    assert all(c.window == window_size for c in calls) and len(calls) == 4
    assert torch.equal(out_packed, out)
    expected = torch.stack((q1.grad, k1.grad, v1.grad), dim=2).reshape(packed.shape)
    assert torch.equal(packed.grad, expected)


@pytest.mark.parametrize("causal", [False, True], ids=["nocausal", "causal"])
@pytest.mark.parametrize("window_size", [(0, 0), (3, 0), (2, 5), (-1, 1), (100, -1)], ids=str)
def test_varlen_window_forward_and_backward(causal, window_size):
    """Packed batches (an empty sequence, a one-token one, unequal q / k lengths): the window
    reaches both varlen ops, aligned bottom-right per sequence as in the reference."""
    lengths_q, lengths_k = [5, 0, 33, 1, 17], [9, 4, 33, 1, 11]
    cu_q = torch.tensor([0, *itertools.accumulate(lengths_q)], dtype=torch.int32)
    cu_k = torch.tensor([0, *itertools.accumulate(lengths_k)], dtype=torch.int32)
    gen = torch.Generator().manual_seed(3)
    q = torch.randn(sum(lengths_q), 4, 64, generator=gen).to(torch.bfloat16).requires_grad_()
    k = torch.randn(sum(lengths_k), 2, 64, generator=gen).to(torch.bfloat16).requires_grad_()
    v = torch.randn(sum(lengths_k), 2, 64, generator=gen).to(torch.bfloat16).requires_grad_()
    dout = torch.randn(q.shape, generator=gen).to(torch.bfloat16)
    with reference_kernels() as calls:
        out, lse = fai.flash_attn_varlen_func(q, k, v, cu_q, cu_k, 33, 33, causal=causal, window_size=window_size,
                                              return_attn_probs=True)
        out.backward(dout)
    assert [(c.op, c.causal, c.window) for c in calls] == [("attn_varlen_fwd", causal, window_size),
                                                           ("attn_varlen_bwd", causal, window_size)]
    args = (q.detach(), k.detach(), v.detach(), cu_q, cu_k)
    ref_out, ref_lse = reference.attention_varlen_forward(*args, causal=causal, window_size=window_size)
    assert torch.equal(out, ref_out) and torch.equal(lse, ref_lse)
    expected = reference.attention_varlen_backward(dout, *args, causal=causal, compute_dtype=torch.float32,
                                                   window_size=window_size)
    for grad, e in zip((q.grad, k.grad, v.grad), expected):
        assert torch.equal(grad, e.to(torch.bfloat16))


def test_make_fx_traces_the_window_into_both_ops():
    """No stand-ins: the fakes accept the window, and the traced graph hands it to both ops."""
    def step(q, k, v):
        out = fai.flash_attn_func(q, k, v, causal=True, window_size=(16, 0), deterministic=True)
        return torch.autograd.grad(out.float().sum(), (q, k, v))

    mode = FakeTensorMode()
    with mode:
        args = [torch.empty(2, 64, 3, 128, dtype=torch.float16, requires_grad=True) for _ in range(3)]
    graph = make_fx(step, tracing_mode="fake")(*args)
    seen = {}
    for node in graph.graph.nodes:
        if node.op == "call_function" and node.target in (torch.ops.dash.attn_fwd.default,
                                                          torch.ops.dash.attn_bwd.default):
            names = [a.name for a in node.target._schema.arguments]
            bound = dict(zip(names, node.args), **node.kwargs)
            seen[node.target.name()] = (bound.get("window_left", -1), bound.get("window_right", -1))
    assert seen == {"dash::attn_fwd": (16, 0), "dash::attn_bwd": (16, 0)}


def test_torch_compile_with_window_matches_eager():
    @torch.compile(backend="aot_eager", fullgraph=True)
    def step(q, k, v):
        return fai.flash_attn_func(q, k, v, window_size=(5, 2)).float().square().sum()

    torch._dynamo.reset()
    q, k, v = _qkv(requires_grad=True)
    with reference_kernels() as calls:
        step(q, k, v).backward()
        compiled_grads = [t.grad.clone() for t in (q, k, v)]
        for t in (q, k, v):
            t.grad = None
        fai.flash_attn_func(q, k, v, window_size=(5, 2)).float().square().sum().backward()
    torch._dynamo.reset()
    assert {c.window for c in calls} == {(5, 2)}
    for a, t in zip(compiled_grads, (q, k, v)):
        assert torch.equal(a, t.grad)


@pytest.mark.parametrize("name", ENTRY_POINTS)
def test_every_entry_point_passes_softcap_with_the_window(name):
    q, k, v = _qkv(seqlen_q=16, seqlen_k=16)
    with reference_kernels() as calls:
        if name == "flash_attn_func":
            fai.flash_attn_func(q, k, v, window_size=(3, 0), softcap=30.0)
        elif name == "flash_attn_qkvpacked_func":
            fai.flash_attn_qkvpacked_func(torch.stack((q, k, v), dim=2), window_size=(3, 0), softcap=30.0)
        else:
            cu = torch.tensor([0, 7, 16], dtype=torch.int32)
            flat = [t.reshape(-1, 3, 64)[:16] for t in (q, k, v)]
            if name == "flash_attn_varlen_func":
                fai.flash_attn_varlen_func(*flat, cu, cu, 9, 9, window_size=(3, 0), softcap=30.0)
            else:
                fai.flash_attn_varlen_qkvpacked_func(torch.stack(flat, dim=1), cu, 9, window_size=(3, 0),
                                                     softcap=30.0)
    assert [(c.window, c.softcap) for c in calls] == [((3, 0), 30.0)]


def test_window_and_softcap_gradients_match():
    q, k, v = _qkv(seqlen_q=30, seqlen_k=41, requires_grad=True)
    dout = torch.randn(q.shape).to(q.dtype)
    with reference_kernels() as calls:
        out = fai.flash_attn_func(q, k, v, causal=True, window_size=(7, 0), softcap=5.0)
        out.backward(dout)
    assert [(c.op, c.window, c.softcap) for c in calls] == [("attn_fwd", (7, 0), 5.0), ("attn_bwd", (7, 0), 5.0)]
    expected = reference.attention_backward(dout, q.detach(), k.detach(), v.detach(), None, True,
                                            compute_dtype=torch.float32, window_size=(7, 0), softcap=5.0)
    for grad, e in zip((q.grad, k.grad, v.grad), expected):
        assert torch.equal(grad, e.to(torch.bfloat16))
