"""CPU: the fake implementation lets FakeTensor / make_fx / torch.compile trace the op
without a GPU, with the right output shapes and dtypes."""
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
