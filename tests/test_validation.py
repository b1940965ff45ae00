"""CPU: every unsupported input is rejected with an error that says what is wrong and
what is supported (the same checks run before any kernel on the GPU path)."""
import pytest
import torch

import dash
from conftest import requires_library
from dash._traits import BWD_TILE, HEAD_DIMS

pytestmark = requires_library


def make_args(batch=2, seqlen_q=33, seqlen_k=47, heads=3, head_dim=64, dtype=torch.bfloat16, device="cpu",
              head_dim_v=None):
    head_dim_v = head_dim if head_dim_v is None else head_dim_v
    q = torch.randn(batch, seqlen_q, heads, head_dim, dtype=dtype, device=device)
    k = torch.randn(batch, seqlen_k, heads, head_dim, dtype=dtype, device=device)
    v = torch.randn(batch, seqlen_k, heads, head_dim_v, dtype=dtype, device=device)
    out = torch.randn(batch, seqlen_q, heads, head_dim_v, dtype=dtype, device=device)
    dout = torch.randn_like(out)
    lse = torch.randn(batch, heads, seqlen_q, dtype=torch.float32, device=device)
    return dict(dout=dout, q=q, k=k, v=v, out=out, softmax_lse=lse)


def call(args, **kw):
    return dash.attn_bwd(args["dout"], args["q"], args["k"], args["v"], args["out"], args["softmax_lse"], **kw)


def test_cpu_tensors_get_a_clear_device_error():
    with pytest.raises(RuntimeError, match="CUDA device"):
        call(make_args())


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int8])
def test_unsupported_dtype(dtype):
    args = make_args()
    args = {name: (t.to(dtype) if name != "softmax_lse" else t) for name, t in args.items()}
    with pytest.raises(TypeError, match="bfloat16 and torch.float16"):
        call(args)


def test_mixed_dtypes():
    args = make_args()
    args["k"] = args["k"].half()
    with pytest.raises(TypeError, match="k has dtype"):
        call(args)


def test_lse_must_be_fp32():
    args = make_args()
    args["softmax_lse"] = args["softmax_lse"].bfloat16()
    with pytest.raises(TypeError, match="softmax_lse must be float32"):
        call(args)


@pytest.mark.parametrize("head_dim", [32, 100, 512])
def test_unsupported_head_dim(head_dim):
    with pytest.raises(ValueError, match=rf"head_dim {head_dim} is not supported.*64, 96, 128, 192, 256"):
        call(make_args(head_dim=head_dim))


FORWARD_ONLY = [pair for pair in HEAD_DIMS if pair not in BWD_TILE]


@pytest.mark.parametrize("pair", FORWARD_ONLY, ids=[f"{d}x{d_v}" for d, d_v in FORWARD_ONLY])
def test_forward_only_head_dims(pair):
    head_dim, head_dim_v = pair
    with pytest.raises(NotImplementedError, match=rf"backward for head_dim {head_dim}\b.* is not implemented yet"):
        call(make_args(head_dim=head_dim, head_dim_v=head_dim_v))


def test_rank():
    args = make_args()
    args["q"] = args["q"][0]
    with pytest.raises(ValueError, match="q must be 4-D"):
        call(args)
    args = make_args()
    args["softmax_lse"] = args["softmax_lse"][0]
    with pytest.raises(ValueError, match="softmax_lse must be 3-D"):
        call(args)


def test_batch_mismatch():
    args = make_args()
    args["k"] = args["k"][:1]
    args["v"] = args["v"][:1]
    with pytest.raises(ValueError, match="batch mismatch"):
        call(args)


def test_gqa_heads_must_divide():
    args = make_args(heads=4)
    args["k"] = args["k"][:, :, :3]
    args["v"] = args["v"][:, :, :3]
    with pytest.raises(ValueError, match="must be a multiple of the 3 heads"):
        call(args)


def test_gqa_k_and_v_heads_must_match():
    args = make_args(heads=4)
    args["k"] = args["k"][:, :, :2]
    args["v"] = args["v"][:, :, :1]
    with pytest.raises(ValueError, match="k and v must have the same number of heads"):
        call(args)


def test_head_dim_mismatch():
    args = make_args(head_dim=64)
    args["v"] = torch.randn(*args["v"].shape[:3], 128, dtype=args["v"].dtype)
    with pytest.raises(ValueError, match="head_dim 64 with head_dim_v 128 is not supported"):
        call(args)


def test_kv_seqlen_mismatch():
    args = make_args()
    args["v"] = args["v"][:, :-1]
    with pytest.raises(ValueError, match="same seqlen"):
        call(args)


def test_out_and_dout_shapes():
    args = make_args()
    args["dout"] = args["dout"][:, :-1]
    with pytest.raises(ValueError, match=r"out and dout must have shape \(batch, seqlen_q, heads, head_dim_v\)"):
        call(args)


def test_lse_shape():
    args = make_args()
    args["softmax_lse"] = args["softmax_lse"].transpose(1, 2).contiguous()
    with pytest.raises(ValueError, match=r"softmax_lse must have shape \(batch, heads, seqlen_q\)"):
        call(args)


def test_last_dim_must_be_contiguous():
    args = make_args()
    args["q"] = torch.randn(2, 33, 3, 128, dtype=torch.bfloat16)[..., ::2]
    with pytest.raises(ValueError, match="contiguous in its last dim"):
        call(args)


def test_empty_sequences():
    with pytest.raises(ValueError, match=">= 1"):
        call(make_args(seqlen_q=0))
    with pytest.raises(ValueError, match=">= 1"):
        call(make_args(seqlen_k=0))


def test_non_finite_scale_and_negative_margin():
    with pytest.raises(ValueError, match="softmax_scale must be finite"):
        call(make_args(), softmax_scale=float("nan"))
    with pytest.raises(ValueError, match="sm_margin must be >= 0"):
        call(make_args(), sm_margin=-1)


# --- window_size and softcap (checked before the device, on every op) --------------------------

def _varlen_args(total=12, heads=2, head_dim=64):
    q = torch.randn(total, heads, head_dim, dtype=torch.bfloat16)
    cu = torch.tensor([0, 5, total], dtype=torch.int32)
    lse = torch.zeros(heads, total, dtype=torch.float32)
    return q, cu, lse


def _each_op(**kw):
    """(name, thunk) calling each dash entry point on valid CPU inputs with the mask keywords."""
    args = make_args()
    q, cu, lse = _varlen_args()
    return [
        ("attn_fwd", lambda: dash.attn_fwd(args["q"], args["k"], args["v"], **kw)),
        ("attn_bwd", lambda: call(args, **kw)),
        ("attn_varlen_fwd", lambda: dash.attn_varlen_fwd(q, q, q, cu, cu, 7, 7, **kw)),
        ("attn_varlen_bwd", lambda: dash.attn_varlen_bwd(q, q, q, q, q, lse, cu, cu, 7, 7, **kw)),
    ]


OPS = ["attn_fwd", "attn_bwd", "attn_varlen_fwd", "attn_varlen_bwd"]


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("window_size", [(-1, -1), (0, 0), (5, 0), (3, 9), (-1, 2), (7, -1), (-5, -7),
                                         (1000, 1000), (2 ** 40, 2 ** 40)], ids=str)
@pytest.mark.parametrize("causal", [False, True], ids=["nocausal", "causal"])
def test_windows_pass_the_checks(op, window_size, causal):
    """Any pair of ints is a valid window (negative: unbounded, past the sequence: clamped),
    so a CPU call gets as far as the device check."""
    thunk = dict(_each_op(window_size=window_size, causal=causal))[op]
    with pytest.raises(RuntimeError, match="CUDA device"):
        thunk()


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("window_size", [5, (1, 2, 3), [4], None, "ab", ("a", 0)], ids=repr)
def test_malformed_window_size(op, window_size):
    thunk = dict(_each_op(window_size=window_size))[op]
    with pytest.raises(ValueError, match="window_size must be a pair"):
        thunk()


def test_malformed_window_size_in_the_plans():
    args = make_args()
    q, cu, _ = _varlen_args()
    with pytest.raises(ValueError, match="window_size must be a pair"):
        dash.attn_bwd_plan(args["q"], args["k"], window_size=(1, 2, 3))
    with pytest.raises(ValueError, match="window_size must be a pair"):
        dash.attn_varlen_bwd_plan(q, q, cu, cu, 7, 7, window_size=4)


@pytest.mark.parametrize("op", OPS)
def test_softcap_with_a_window_passes_the_checks(op):
    thunk = dict(_each_op(softcap=30.0, window_size=(8, 0)))[op]
    with pytest.raises(RuntimeError, match="CUDA device"):
        thunk()


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("softcap", [-1.0, float("nan"), float("inf")], ids=str)
def test_invalid_softcap(op, softcap):
    thunk = dict(_each_op(softcap=softcap))[op]
    with pytest.raises(ValueError, match="softcap must be finite and >= 0"):
        thunk()


def test_window_raw_op_arguments():
    """The torch ops take window_left, window_right, softcap as trailing arguments."""
    args = make_args()
    with pytest.raises(RuntimeError, match="CUDA device"):
        torch.ops.dash.attn_fwd(args["q"], args["k"], args["v"], 0.125, False, False, 0, "auto", 16, 0, 0.0)
    with pytest.raises(RuntimeError, match="CUDA device"):
        torch.ops.dash.attn_bwd(args["dout"], args["q"], args["k"], args["v"], args["out"], args["softmax_lse"],
                                0.125, True, True, 0, "auto", None, None, window_left=16, window_right=3)
    with pytest.raises(ValueError, match="softcap must be finite"):
        torch.ops.dash.attn_fwd(args["q"], args["k"], args["v"], 0.125, False, softcap=-2.0)
