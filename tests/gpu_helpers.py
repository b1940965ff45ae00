"""Helpers for the GPU tests: inputs, poisoned allocations and FlashAttention-style
tolerances (our error vs an fp64 reference, bounded by a multiple of the error a plain
PyTorch computation in the same 16-bit dtype makes)."""
import math

import torch

import dash
from dash import reference


def make_inputs(batch, seqlen_q, seqlen_k, heads, head_dim, dtype, causal, seed=0, device="cuda", heads_kv=None,
                head_dim_v=None):
    """Random q, k, v, dout and the reference forward's out, LSE. heads_kv (default: heads)
    gives k and v fewer heads (GQA / MQA); head_dim_v (default: head_dim) is v's and dout's
    head dim."""
    gen = torch.Generator(device=device).manual_seed(seed)
    head_dim_v = head_dim if head_dim_v is None else head_dim_v
    heads_kv = heads if heads_kv is None else heads_kv
    q = torch.randn((batch, seqlen_q, heads, head_dim), generator=gen, device=device, dtype=dtype)
    k = torch.randn((batch, seqlen_k, heads_kv, head_dim), generator=gen, device=device, dtype=dtype)
    v = torch.randn((batch, seqlen_k, heads_kv, head_dim_v), generator=gen, device=device, dtype=dtype)
    dout = torch.randn((batch, seqlen_q, heads, head_dim_v), generator=gen, device=device, dtype=dtype)
    out, lse = reference.attention_forward(q, k, v, causal=causal, compute_dtype=torch.float32)
    return dict(dout=dout, q=q, k=k, v=v, out=out, softmax_lse=lse)


def poison_allocator(*like):
    """Fill freed blocks of the outputs' sizes with NaN so that the op's freshly
    allocated outputs start out as NaN: an element the kernels fail to write shows."""
    blocks = [torch.full_like(t, float("nan")) for t in like]
    del blocks


def run_dash(inputs, causal, deterministic=False, **kw):
    poison_allocator(inputs["q"], inputs["k"], inputs["v"])
    return dash.attn_bwd(inputs["dout"], inputs["q"], inputs["k"], inputs["v"], inputs["out"],
                         inputs["softmax_lse"], causal=causal, deterministic=deterministic, **kw)


def assert_close_fa_style(name, ours, ref, pt, dtype, extra_atol=0.0):
    """max|ours - ref| <= 2 max|pt - ref| + atol (+ extra_atol), and the same for the relative L2
    error."""
    assert not torch.isnan(ours).any(), f"{name}: NaN in output (unwritten or invalid elements)"
    ours64 = ours.double()
    pt64 = pt.double()
    atol = 0.1 * torch.finfo(dtype).eps + extra_atol
    err = (ours64 - ref).abs().max().item()
    pt_err = (pt64 - ref).abs().max().item()
    assert err <= 2 * pt_err + atol, f"{name}: max abs error {err:.3e} > 2 x PyTorch {dtype} error {pt_err:.3e} + {atol:.1e}"
    ref_norm = ref.norm().item()
    if ref_norm > 0:
        rel = (ours64 - ref).norm().item() / ref_norm
        rel_pt = (pt64 - ref).norm().item() / ref_norm
        assert rel <= 2 * rel_pt + 1e-4, f"{name}: relative L2 error {rel:.3e} > 2 x PyTorch's {rel_pt:.3e}"


def check_against_reference(inputs, causal, grads, dtype):
    ref = reference.attention_backward(inputs["dout"], inputs["q"], inputs["k"], inputs["v"], causal=causal,
                                       compute_dtype=torch.float64)
    pt = reference.attention_backward(inputs["dout"], inputs["q"], inputs["k"], inputs["v"], causal=causal,
                                      compute_dtype=dtype)
    for name, ours, r, p in zip(("dq", "dk", "dv"), grads, ref, pt):
        assert ours.shape == r.shape and ours.dtype == dtype
        assert_close_fa_style(name, ours, r, p, dtype)


def default_scale(head_dim):
    return 1.0 / math.sqrt(head_dim)


# softmax_lse against fp64: the forward's LSE error stays far below this (fp32 sums of exp2).
LSE_ATOL = 1e-3


def check_lse(lse, ref_lse, atol=LSE_ATOL):
    """-inf exactly where the reference has -inf (rows that see no key), elsewhere within atol of
    the fp64 value; never NaN or +inf."""
    assert lse.dtype == torch.float32 and lse.shape == ref_lse.shape
    assert not torch.isnan(lse).any(), "NaN in softmax_lse (unwritten or invalid rows)"
    assert not torch.isposinf(lse).any()
    empty = torch.isneginf(ref_lse)
    assert torch.equal(torch.isneginf(lse), empty), "-inf rows of softmax_lse differ from the reference"
    if (~empty).any():
        err = (lse.double() - ref_lse.double())[~empty].abs().max().item()
        assert err <= atol, f"softmax_lse: max abs error {err:.3e} > {atol:.3e}"


def launched_kernels(fn):
    """Names of the CUDA kernels fn launches (torch.profiler), e.g. dash's forward
    attn_fwd_sm90_kernel<FwdConfig<64, 64, cutlass::bfloat16_t, BandMask, true, false, false>> (flags:
    fwd_kernel_flags)."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    return [e.key for e in prof.key_averages()]


def fwd_kernel_flags(name):
    """A forward kernel's FwdConfig flags from its name (launched_kernels): {"mask": "FullMask" or
    "BandMask", "short_walk", "fixed_offset_softcap", "kv_multicast": bools}."""
    import re
    match = re.search(r"FwdConfig<\d+, \d+, [\w:]+, ([\w:]+), (true|false), (true|false), (true|false)>", name)
    assert match, name
    mask, *flags = match.groups()
    return {"mask": mask.split("::")[-1], **dict(zip(("short_walk", "fixed_offset_softcap", "kv_multicast"), (f == "true" for f in flags)))}
