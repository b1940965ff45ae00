"""CPU: dash::attn_fwd without a GPU. Its fake implementation gives FakeTensor, make_fx
and torch.compile the right shapes; its autograd formula (dash/autograd.py) puts
dash::attn_bwd into the traced backward; its CPU registration rejects bad arguments with
errors that say what is wrong and what is supported."""
import pytest
import torch
from torch._dynamo.backends.common import aot_autograd
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.proxy_tensor import make_fx

import dash
from conftest import requires_library

pytestmark = requires_library


def _qkv(mode=None, batch=2, seqlen_q=100, seqlen_k=260, heads=4, head_dim=128, dtype=torch.bfloat16,
         requires_grad=False):
    def make(seqlen):
        return torch.empty(batch, seqlen, heads, head_dim, dtype=dtype, requires_grad=requires_grad)
    if mode is None:
        return make(seqlen_q), make(seqlen_k), make(seqlen_k)
    with mode:
        return make(seqlen_q), make(seqlen_k), make(seqlen_k)


@pytest.mark.parametrize("head_dim,dtype", [(128, torch.bfloat16), (64, torch.float16)])
def test_fake_tensor_shapes(head_dim, dtype):
    mode = FakeTensorMode()
    q, k, v = _qkv(mode, head_dim=head_dim, dtype=dtype)
    with mode:
        out, lse = torch.ops.dash.attn_fwd(q, k, v, 0.125, True)
    assert out.shape == q.shape and out.dtype == dtype and out.is_contiguous()
    assert lse.shape == (2, 4, 100) and lse.dtype == torch.float32


def test_fake_out_is_contiguous_for_strided_q():
    """The kernel writes a fresh contiguous out whatever q's strides; the fake says so too."""
    mode = FakeTensorMode()
    with mode:
        qkv = torch.empty(2, 50, 3, 4, 64, dtype=torch.bfloat16)
        q, k, v = qkv.unbind(2)
        out, lse = torch.ops.dash.attn_fwd(q, k, v, 0.125, False)
    assert not q.is_contiguous() and out.is_contiguous() and out.shape == q.shape


def test_meta_tensors():
    q, k, v = (t.to("meta") for t in _qkv(dtype=torch.float16, head_dim=64))
    out, lse = dash.attn_fwd(q, k, v)
    assert out.device.type == "meta" and out.shape == q.shape and lse.shape == (2, 4, 100)


def test_fake_checks_reject_bad_shapes():
    mode = FakeTensorMode()
    q, _, _ = _qkv(mode)
    _, k, v = _qkv(mode, heads=3)
    with mode, pytest.raises(RuntimeError, match="must be a multiple of the 3 heads"):
        torch.ops.dash.attn_fwd(q, k, v, 0.125, False)
    q, k, v = _qkv(mode, head_dim=100)
    with mode, pytest.raises(ValueError, match="head_dim 100 is not supported"):
        torch.ops.dash.attn_fwd(q, k, v, 0.125, False)


def test_make_fx_traces_forward_and_backward():
    """Autograd through attn_fwd, traced with fake tensors: the backward graph holds
    attn_bwd with the forward's scale, mask and deterministic flag."""
    def loss_and_grads(q, k, v):
        out, lse = dash.attn_fwd(q, k, v, softmax_scale=0.25, causal=True, deterministic=True)
        return torch.autograd.grad(out.float().square().sum(), (q, k, v))

    args = _qkv(batch=1, seqlen_q=64, seqlen_k=96, heads=2, head_dim=64, requires_grad=True)
    graph = make_fx(loss_and_grads, tracing_mode="fake")(*args)
    code = str(graph.code)
    assert "dash.attn_fwd" in code and "dash.attn_bwd" in code
    bwd_line = next(line for line in code.splitlines() if "dash.attn_bwd" in line)
    assert "0.25, True, True" in bwd_line


def test_lse_has_no_gradient():
    """softmax_lse is marked non-differentiable (FlashAttention-3 ignores its gradient too)."""
    mode = FakeTensorMode()
    q, k, v = _qkv(mode, requires_grad=True)
    with mode:
        out, lse = dash.attn_fwd(q, k, v)
        assert out.requires_grad and not lse.requires_grad
        with pytest.raises(RuntimeError, match="does not require grad"):
            lse.sum().backward()
        (out.float().sum() + lse.sum()).backward()  # lse's part contributes nothing
        assert q.grad is not None and q.grad.shape == q.shape


def test_torch_compile_fullgraph_forward_and_backward_graphs():
    """Dynamo + AOTAutograd capture both ops in one forward and one backward graph. The
    compilers only record the graphs; they run nothing (there is no GPU)."""
    graphs = {}

    def recorder(kind):
        def compiler(gm, example_inputs):
            graphs[kind] = str(gm.code)
            return gm.forward if kind == "forward" else (lambda *a: None)
        return compiler

    backend = aot_autograd(fw_compiler=recorder("forward"), bw_compiler=recorder("backward"))

    @torch.compile(backend=backend, fullgraph=True)
    def attention(q, k, v):
        out, _ = dash.attn_fwd(q, k, v, causal=True, deterministic=True)
        return out

    torch._dynamo.reset()
    q, k, v = _qkv(batch=1, seqlen_q=64, seqlen_k=64, heads=2, requires_grad=True)
    # Compile the backward graph with the forward's instead of at the first backward.
    with torch._functorch.config.patch(force_non_lazy_backward_lowering=True):
        with pytest.raises(RuntimeError, match="CUDA device"):  # the forward graph runs the CPU op
            attention(q, k, v)
    assert "dash.attn_fwd" in graphs["forward"]
    assert "dash.attn_bwd" in graphs["backward"]
    torch._dynamo.reset()


# --- argument checks of the op's CPU registration (the same checks run on the GPU) ----

def _args(batch=2, seqlen_q=33, seqlen_k=47, heads=3, head_dim=64, dtype=torch.bfloat16):
    q = torch.randn(batch, seqlen_q, heads, head_dim).to(dtype)
    k = torch.randn(batch, seqlen_k, heads, head_dim).to(dtype)
    v = torch.randn(batch, seqlen_k, heads, head_dim).to(dtype)
    return q, k, v


def test_last_bwd_task_counter_test_hook():
    """torch.ops.dash._last_bwd_task_counter (tests only): the task counter words kept from the last
    counter-dealt backward call run with DASH_TEST_KEEP_TASK_COUNTER=1 (drawn, CTAs started, how
    diagonal's tail was dealt), empty before any such call; without a GPU there is none."""
    words = torch.ops.dash._last_bwd_task_counter()
    assert words.dtype == torch.int32 and words.dim() == 1 and words.numel() in (0, 3)
    if not torch.cuda.is_available():
        assert words.numel() == 0


def test_cpu_tensors_get_a_clear_device_error():
    with pytest.raises(RuntimeError, match="CUDA device"):
        dash.attn_fwd(*_args())


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int8])
def test_unsupported_dtype(dtype):
    with pytest.raises(TypeError, match="bfloat16 and torch.float16"):
        dash.attn_fwd(*_args(dtype=dtype))


def test_mixed_dtypes():
    q, k, v = _args()
    with pytest.raises(TypeError, match="v has dtype"):
        dash.attn_fwd(q, k, v.half())


@pytest.mark.parametrize("head_dim", [32, 100, 512])
def test_unsupported_head_dim(head_dim):
    with pytest.raises(ValueError, match=rf"head_dim {head_dim} is not supported.*64, 96, 128, 192, 256"):
        dash.attn_fwd(*_args(head_dim=head_dim))


def test_mismatched_heads():
    q, _, _ = _args(heads=4)
    _, k, v = _args(heads=3)
    with pytest.raises(ValueError, match="must be a multiple of the 3 heads"):
        dash.attn_fwd(q, k, v)


def test_shape_errors():
    q, k, v = _args()
    with pytest.raises(ValueError, match="q must be 4-D"):
        dash.attn_fwd(q[0], k, v)
    with pytest.raises(ValueError, match="same seqlen"):
        dash.attn_fwd(q, k, v[:, :-1])
    with pytest.raises(ValueError, match="batch mismatch"):
        dash.attn_fwd(q, k[:1], v[:1])
    with pytest.raises(ValueError, match=">= 1"):
        dash.attn_fwd(*_args(seqlen_q=0))
    with pytest.raises(ValueError, match="contiguous in its last dim"):
        dash.attn_fwd(torch.randn(2, 33, 3, 128, dtype=torch.bfloat16)[..., ::2], k, v)


def test_scalar_argument_errors():
    with pytest.raises(ValueError, match="softmax_scale must be > 0"):
        dash.attn_fwd(*_args(), softmax_scale=-0.5)
    with pytest.raises(ValueError, match="softmax_scale must be finite"):
        dash.attn_fwd(*_args(), softmax_scale=float("inf"))
    with pytest.raises(ValueError, match="sm_margin must be >= 0"):
        dash.attn_fwd(*_args(), sm_margin=-1)
    with pytest.raises(ValueError, match="unknown schedule"):
        dash.attn_fwd(*_args(), schedule="sideways")
