"""CPU: the fake implementation lets FakeTensor / make_fx / torch.compile trace the op
without a GPU, with the right output shapes and dtypes, including calls with the mask
arguments (window_left, window_right, softcap)."""
import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.proxy_tensor import make_fx

from conftest import requires_library

pytestmark = requires_library


def _inputs(mode, batch=2, seqlen_q=100, seqlen_k=260, heads=4, head_dim=128, dtype=torch.bfloat16):
    with mode:
        q = torch.empty(batch, seqlen_q, heads, head_dim, dtype=dtype)
        k = torch.empty(batch, seqlen_k, heads, head_dim, dtype=dtype)
        v = torch.empty(batch, seqlen_k, heads, head_dim, dtype=dtype)
        out = torch.empty_like(q)
        dout = torch.empty_like(q)
        lse = torch.empty(batch, heads, seqlen_q, dtype=torch.float32)
    return dout, q, k, v, out, lse


def test_fake_tensor_shapes():
    mode = FakeTensorMode()
    dout, q, k, v, out, lse = _inputs(mode)
    with mode:
        dq, dk, dv = torch.ops.dash.attn_bwd(dout, q, k, v, out, lse, 0.125, True, True)
    assert dq.shape == q.shape and dk.shape == k.shape and dv.shape == v.shape
    assert dq.dtype == dk.dtype == dv.dtype == torch.bfloat16


def test_meta_tensors():
    dout, q, k, v, out, lse = [t.to("meta") for t in _inputs(FakeTensorMode(), dtype=torch.float16)]
    dq, dk, dv = torch.ops.dash.attn_bwd(dout, q, k, v, out, lse, 0.1, False, False)
    assert dq.device.type == "meta" and dk.shape == k.shape and dv.dtype == torch.float16


def test_make_fx_traces_the_op():
    def backward(dout, q, k, v, out, lse):
        dq, dk, dv = torch.ops.dash.attn_bwd(dout, q, k, v, out, lse, 0.125, False, True)
        return dq.float().sum() + dk.float().sum() + dv.float().sum()

    args = [torch.zeros(t.shape, dtype=t.dtype) for t in _inputs(FakeTensorMode())]
    graph = make_fx(backward, tracing_mode="fake")(*args)
    assert "dash.attn_bwd" in str(graph.code)


def test_torch_compile_fullgraph_traces():
    """Dynamo captures the op in one graph (the backend inspects it instead of running)."""
    seen = []

    def inspect_backend(gm, example_inputs):
        seen.append(str(gm.code))
        return lambda *a: (torch.zeros(()),)

    @torch.compile(backend=inspect_backend, fullgraph=True)
    def backward(dout, q, k, v, out, lse):
        dq, dk, dv = torch.ops.dash.attn_bwd(dout, q, k, v, out, lse, 0.125, True, True)
        return dq.float().sum() + dk.float().sum() + dv.float().sum()

    torch._dynamo.reset()
    args = [torch.zeros(t.shape, dtype=t.dtype) for t in _inputs(FakeTensorMode(), seqlen_q=64, seqlen_k=64)]
    backward(*args)
    assert seen and "dash.attn_bwd" in seen[0]


WINDOWS = [(-1, -1), (0, 0), (128, 0), (3, 77), (-1, 5), (9, -1), (10 ** 6, 10 ** 6)]


@pytest.mark.parametrize("window", WINDOWS, ids=str)
def test_fakes_accept_window_arguments(window):
    """Every op's fake takes the trailing window_left, window_right, softcap, positionally
    and by keyword; output shapes do not depend on the window."""
    mode = FakeTensorMode()
    dout, q, k, v, out, lse = _inputs(mode)
    with mode:
        o, l = torch.ops.dash.attn_fwd(q, k, v, 0.125, False, False, 0, "auto", *window, 0.0)
        assert o.shape == q.shape and l.shape == lse.shape and l.dtype == torch.float32
        o, l = torch.ops.dash.attn_fwd(q, k, v, 0.125, True, window_left=window[0], window_right=window[1])
        assert o.shape == q.shape
        dq, dk, dv = torch.ops.dash.attn_bwd(dout, q, k, v, out, lse, 0.125, False, True, 0, "auto", None, None,
                                             *window, 0.0)
        assert dq.shape == q.shape and dk.shape == k.shape and dv.shape == v.shape
        dq, dk, dv = torch.ops.dash.attn_bwd(dout, q, k, v, out, lse, 0.125, True, True, window_left=window[0],
                                             window_right=window[1], softcap=0.0)
        assert dq.dtype == torch.bfloat16 and dk.shape == k.shape


@pytest.mark.parametrize("window", WINDOWS, ids=str)
def test_varlen_fakes_accept_window_arguments(window):
    mode = FakeTensorMode()
    with mode:
        q = torch.empty(50, 4, 64, dtype=torch.float16)
        k = torch.empty(70, 2, 64, dtype=torch.float16)
        cu_q = torch.empty(4, dtype=torch.int32)
        cu_k = torch.empty(4, dtype=torch.int32)
        out, lse = torch.ops.dash.attn_varlen_fwd(q, k, k, cu_q, cu_k, None, None, 30, 40, 0.125, False, False, 0,
                                                  "auto", *window, 0.0)
        assert out.shape == q.shape and lse.shape == (4, 50) and lse.dtype == torch.float32
        dq, dk, dv = torch.ops.dash.attn_varlen_bwd(out, q, k, k, out, lse, cu_q, cu_k, None, None, 30, 40, 0.125,
                                                    True, True, window_left=window[0], window_right=window[1])
        assert dq.shape == q.shape and dk.shape == k.shape and dv.shape == k.shape


def test_make_fx_traces_the_window():
    def backward(dout, q, k, v, out, lse):
        dq, dk, dv = torch.ops.dash.attn_bwd(dout, q, k, v, out, lse, 0.125, False, True, 0, "auto", None, None,
                                             100, 3, 0.0)
        return dq.float().sum() + dk.float().sum() + dv.float().sum()

    args = [torch.zeros(t.shape, dtype=t.dtype) for t in _inputs(FakeTensorMode())]
    graph = make_fx(backward, tracing_mode="fake")(*args)
    (node,) = [n for n in graph.graph.nodes if n.target is torch.ops.dash.attn_bwd.default]
    names = [a.name for a in node.target._schema.arguments]
    bound = dict(zip(names, node.args), **node.kwargs)
    assert (bound["window_left"], bound["window_right"]) == (100, 3)


def test_torch_compile_fullgraph_traces_windowed_forward():
    seen = []

    def inspect_backend(gm, example_inputs):
        seen.append(str(gm.code))
        return lambda *a: (torch.zeros(()),)

    @torch.compile(backend=inspect_backend, fullgraph=True)
    def forward(q, k, v):
        out, lse = torch.ops.dash.attn_fwd(q, k, v, 0.125, True, window_left=31, window_right=0)
        return out.float().sum() + lse.sum()

    torch._dynamo.reset()
    _, q, k, v, _, _ = [torch.zeros(t.shape, dtype=t.dtype) for t in _inputs(FakeTensorMode(), seqlen_q=64,
                                                                              seqlen_k=64)]
    forward(q, k, v)
    torch._dynamo.reset()
    assert seen and "dash.attn_fwd" in seen[0] and "31" in seen[0]


@pytest.mark.parametrize("softcap", [-1.0, float("nan"), float("inf")], ids=str)
def test_fakes_reject_invalid_softcap(softcap):
    """The fakes check softcap as the ops do, so a traced call fails where the real one would."""
    mode = FakeTensorMode()
    dout, q, k, v, out, lse = _inputs(mode)
    with mode:
        with pytest.raises(RuntimeError, match="softcap must be finite and >= 0"):
            torch.ops.dash.attn_fwd(q, k, v, 0.125, True, softcap=softcap)
        with pytest.raises(RuntimeError, match="softcap must be finite and >= 0"):
            torch.ops.dash.attn_bwd(dout, q, k, v, out, lse, 0.125, True, True, softcap=softcap)
