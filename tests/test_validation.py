"""CPU: every unsupported input is rejected with an error that says what is wrong and
what is supported (the same checks run before any kernel on the GPU path)."""
import pytest
import torch

import dash
from conftest import requires_library

pytestmark = requires_library


def make_args(batch=2, seqlen_q=33, seqlen_k=47, heads=3, head_dim=64, dtype=torch.bfloat16, device="cpu"):
    q = torch.randn(batch, seqlen_q, heads, head_dim, dtype=dtype, device=device)
    k = torch.randn(batch, seqlen_k, heads, head_dim, dtype=dtype, device=device)
    v = torch.randn(batch, seqlen_k, heads, head_dim, dtype=dtype, device=device)
    out = torch.randn_like(q)
    dout = torch.randn_like(q)
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


@pytest.mark.parametrize("head_dim", [32, 96, 192, 256])
def test_unsupported_head_dim(head_dim):
    with pytest.raises(ValueError, match=rf"head_dim {head_dim} is not supported.*64, 128"):
        call(make_args(head_dim=head_dim))


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
    with pytest.raises(ValueError, match="same head_dim"):
        call(args)


def test_kv_seqlen_mismatch():
    args = make_args()
    args["v"] = args["v"][:, :-1]
    with pytest.raises(ValueError, match="same seqlen"):
        call(args)


def test_out_and_dout_shapes():
    args = make_args()
    args["dout"] = args["dout"][:, :-1]
    with pytest.raises(ValueError, match="out and dout must have q's shape"):
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
