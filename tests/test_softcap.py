"""GPU: softcap (FlashAttention-3's: with softcap > 0 every scaled score s = softmax_scale * q.k
becomes softcap * tanh(s / softcap) before the softmax; the backward differentiates through it).

The kernels use the hardware's tanh.approx (relative error about 2^-11), so results are held to
FlashAttention's tolerances against an fp64 reference: max |ours - ref| <= 2 x the error of plain
PyTorch in the same 16-bit dtype + a small atol (for the gradients FlashAttention-3's extra 3e-4
softcap allowance), the LSE within 1e-3 + 2^-10 * min(softcap, max |s|) (the bound tanh.approx puts
on a capped score). q and k are scaled so that |scores| reach several times the cap (tanh
saturates) while most scores lie in its bending range.

Forward (out, lse) and backward (dq, dk, dv) for caps 5, 20, 30, 50, head dims 64 / 128, bf16 /
fp16, full, causal and sliding-window masks, odd lengths and seqlen_q != seqlen_k both ways, GQA /
MQA, both backward modes and the fixed schedules, outputs poisoned with NaN first; a non-default
softmax_scale; packed batches (empty and 1-token sequences, unequal q / k lengths, GQA); rows that
see no key (out 0, lse -inf, dq 0, nothing NaN); softcap=0 bitwise the call without softcap, and
softcap=1e6 close to no softcap; 50-repeat bitwise reproducibility (fixed and packed);
flash_attn_func / flash_attn_varlen_func with autograd; invalid softcap values; and
torch.library.opcheck of the ops with softcap > 0."""
import itertools
import math

import pytest
import torch

import dash
from conftest import requires_hopper
from dash import flash_attn_interface as fai
from dash import reference
from dash._traits import HEAD_DIMS as _HEAD_DIM_PAIRS
from band_helpers import (LSE_ATOL, check_lse, make_qkv, make_varlen, run_bwd, run_fwd, varlen_bwd,
                          varlen_fwd, varlen_visibility, visibility)
from gpu_helpers import assert_close_fa_style, fwd_kernel_flags, launched_kernels

# The trait table's head dims whose v has q / k's head dim (the tests below run head_dim_v = head_dim).
SQUARE_HEAD_DIMS = [qk for qk, v in _HEAD_DIM_PAIRS if qk == v]

pytestmark = requires_hopper

BF16, FP16 = torch.bfloat16, torch.float16
FULL = (-1, -1)
GRAD_SOFTCAP_ATOL = 3e-4  # FlashAttention-3's extra absolute allowance for softcap gradients
TANH_APPROX_REL = 2.0 ** -11  # tanh.approx.f32's relative error bound


# --- helpers ------------------------------------------------------------------------------------

def amplify(q, k, softcap):
    """q and k scaled by 0.8 sqrt(softcap) each: the scaled scores q.k / sqrt(d) of N(0, 1) inputs
    get a standard deviation of 0.64 softcap, so the largest |scores| are 3-4x the cap (tanh
    saturated) while most lie in its bending range. The raw fp16 products stay far from fp16's
    range (cap 50, d 128: |q.k| ~ 362 per standard deviation, a few thousand at most)."""
    a = 0.8 * math.sqrt(softcap)
    return (q.float() * a).to(q.dtype), (k.float() * a).to(k.dtype)


def max_abs_score(q, k, softmax_scale=None):
    """max |softmax_scale * q.k| over all (query, key, head) triples (packed 3-D inputs: also
    across sequences, an upper bound)."""
    scale = q.shape[-1] ** -0.5 if softmax_scale is None else softmax_scale
    if q.dim() == 3:
        q, k = q[None], k[None]
    if q.numel() == 0 or k.numel() == 0:
        return 0.0
    k = k.repeat_interleave(q.shape[2] // k.shape[2], dim=2)
    return torch.einsum("bqhd,bkhd->bhqk", q.float(), k.float()).abs().max().item() * scale


def lse_atol(softcap, q, k, softmax_scale=None):
    """tanh.approx changes a capped score c * t by at most |c * t| * 2^-11 <= min(c, |s|) * 2^-11,
    and the LSE moves by at most its largest score's change: 2x that bound + LSE_ATOL."""
    if softcap <= 0:
        return LSE_ATOL
    return LSE_ATOL + 2 * TANH_APPROX_REL * min(softcap, max_abs_score(q, k, softmax_scale))


def assert_scores_exceed_cap(q, k, softcap):
    """The test's own premise: the cap bends the scores (checked where there are enough of them
    that N(0, (0.64 c)^2) scores certainly pass 2c)."""
    pairs = q.shape[-3] * k.shape[-3] * q.shape[-2] * (q.shape[0] if q.dim() == 4 else 1)
    if pairs >= 20000:
        assert max_abs_score(q, k) > 2 * softcap, "the inputs do not reach the cap: the test tests nothing"


def check_forward(q, k, v, out, lse, causal, window, softcap, softmax_scale=None, lse_tol=None):
    dtype = q.dtype
    ref_out, ref_lse = reference.attention_forward(q.double(), k.double(), v.double(), softmax_scale, causal,
                                                   compute_dtype=torch.float64, window_size=window, softcap=softcap)
    pt_out, _ = reference.attention_forward(q, k, v, softmax_scale, causal, compute_dtype=dtype, window_size=window,
                                            softcap=softcap)
    assert out.shape == q.shape and out.dtype == dtype and out.is_contiguous()
    assert_close_fa_style("out", out, ref_out, pt_out, dtype)
    check_lse(lse, ref_lse, lse_atol(softcap, q, k, softmax_scale) if lse_tol is None else lse_tol)
    rows_see, _ = visibility(q.shape[1], k.shape[1], causal, window)
    if (~rows_see).any():
        assert out[:, ~rows_see].abs().max() == 0, "rows that see no key must get out 0"
        assert torch.isneginf(lse[:, :, ~rows_see]).all(), "rows that see no key must get lse -inf"


def check_backward(dout, q, k, v, grads, causal, window, softcap, softmax_scale=None):
    dtype = q.dtype
    ref = reference.attention_backward(dout, q, k, v, softmax_scale, causal, compute_dtype=torch.float64,
                                       window_size=window, softcap=softcap)
    pt = reference.attention_backward(dout, q, k, v, softmax_scale, causal, compute_dtype=dtype, window_size=window,
                                      softcap=softcap)
    for name, ours, r, p in zip(("dq", "dk", "dv"), grads, ref, pt):
        assert ours.shape == r.shape and ours.dtype == dtype, name
        assert torch.isfinite(ours).all(), f"{name}: NaN or inf"
        assert_close_fa_style(name, ours, r, p, dtype, GRAD_SOFTCAP_ATOL)
    rows_see, keys_seen = visibility(q.shape[1], k.shape[1], causal, window)
    if (~rows_see).any():
        assert grads[0][:, ~rows_see].abs().max() == 0, "rows that see no key must get dq 0"
    if (~keys_seen).any():
        assert grads[1][:, ~keys_seen].abs().max() == 0, "keys no query sees must get dk 0"
        assert grads[2][:, ~keys_seen].abs().max() == 0, "keys no query sees must get dv 0"


def fwd_bwd_and_check(q, k, v, dout, causal, window, softcap, deterministic, **kw):
    """Forward against the reference, then the backward on the forward's own out and lse (what
    autograd hands it) against the reference."""
    out, lse = run_fwd(q, k, v, causal, window, softcap=softcap, **kw)
    check_forward(q, k, v, out, lse, causal, window, softcap, **kw)
    grads = run_bwd(dout, q, k, v, out, lse, causal, window, deterministic=deterministic, softcap=softcap, **kw)
    check_backward(dout, q, k, v, grads, causal, window, softcap, **kw)
    return out, lse, grads


def _mask_id(causal, window):
    return f"{'causal' if causal else 'nc'}-{window[0]}_{window[1]}"


def _dtype_id(dtype):
    return "bf16" if dtype == BF16 else "fp16"


# --- fixed length: against the fp64 reference ----------------------------------------------------

MASKS = [(False, FULL), (True, FULL), (True, (100, 0)), (False, (63, 63))]
SEQLENS = [(1, 1), (17, 17), (113, 113), (1000, 1000), (2049, 2049), (113, 1000), (1000, 113), (1, 300)]
CAPS = [5.0, 20.0, 30.0, 50.0]
COMBOS = list(itertools.product((64, 128), (BF16, FP16), (True, False), CAPS))  # head dim, dtype, deterministic, cap


def _matrix():
    """Every mask at every length; case (i, j) takes COMBOS[(8 i + 5 j) % 32], a bijection, so the
    32 cases run each (head dim, dtype, backward mode, cap) once and every mask meets both head
    dims, both dtypes, both modes and all four caps."""
    cases = []
    for i, (causal, window) in enumerate(MASKS):
        for j, (seqlen_q, seqlen_k) in enumerate(SEQLENS):
            head_dim, dtype, deterministic, softcap = COMBOS[(8 * i + 5 * j) % len(COMBOS)]
            case_id = (f"{_mask_id(causal, window)}-{seqlen_q}x{seqlen_k}-d{head_dim}-{_dtype_id(dtype)}-"
                       f"{'det' if deterministic else 'nondet'}-cap{softcap:g}")
            cases.append(pytest.param(causal, window, seqlen_q, seqlen_k, head_dim, dtype, deterministic, softcap,
                                      100 * i + j, id=case_id))
    assert len({(8 * i + 5 * j) % len(COMBOS) for i in range(len(MASKS)) for j in range(len(SEQLENS))}) == len(COMBOS)
    return cases


@pytest.mark.parametrize("causal,window,seqlen_q,seqlen_k,head_dim,dtype,deterministic,softcap,seed", _matrix())
def test_matches_reference(causal, window, seqlen_q, seqlen_k, head_dim, dtype, deterministic, softcap, seed):
    batch, heads = (1, 2) if seqlen_q * seqlen_k > 1_000_000 else (2, 3)
    q, k, v, dout = make_qkv(batch, seqlen_q, seqlen_k, heads, head_dim, dtype, seed=seed)
    q, k = amplify(q, k, softcap)
    assert_scores_exceed_cap(q, k, softcap)
    fwd_bwd_and_check(q, k, v, dout, causal, window, softcap, deterministic)


GQA_MASKS = [(True, FULL), (False, (63, 63)), (False, FULL), (True, (100, 0))]
GQA_LENGTHS = [(113, 1000), (1000, 1000), (1000, 113), (777, 777)]


@pytest.mark.parametrize("heads,heads_kv", [(8, 2), (8, 1)], ids=["gqa", "mqa"])
@pytest.mark.parametrize("causal,window", GQA_MASKS, ids=[_mask_id(*m) for m in GQA_MASKS])
@pytest.mark.parametrize("head_dim", [64, 128])
def test_gqa_mqa(head_dim, causal, window, heads, heads_kv):
    i = GQA_MASKS.index((causal, window))
    seqlen_q, seqlen_k = GQA_LENGTHS[(i + heads_kv + head_dim // 64) % len(GQA_LENGTHS)]
    dtype = (BF16, FP16)[(i + heads_kv) % 2]
    softcap = CAPS[(2 * i + head_dim // 64 + 3 * heads_kv) % len(CAPS)]
    q, k, v, dout = make_qkv(2, seqlen_q, seqlen_k, heads, head_dim, dtype, heads_kv=heads_kv, seed=40 + i + heads_kv)
    q, k = amplify(q, k, softcap)
    assert_scores_exceed_cap(q, k, softcap)
    _, _, grads = fwd_bwd_and_check(q, k, v, dout, causal, window, softcap,
                                    deterministic=(i + head_dim // 64) % 2 == 0)
    assert grads[1].shape == k.shape and grads[2].shape == v.shape


@pytest.mark.parametrize("causal,window", [(False, FULL), (False, (63, 100))], ids=["full", "window"])
def test_softmax_scale(causal, window):
    """A non-default softmax_scale scales the scores before the cap: 0.5 * q.k of N(0, 1) inputs
    with d = 64 has standard deviation 4, which a cap of 5 bends (inputs not scaled)."""
    q, k, v, dout = make_qkv(2, 300, 500, 4, 64, BF16, heads_kv=2, seed=5)
    assert max_abs_score(q, k, 0.5) > 10
    fwd_bwd_and_check(q, k, v, dout, causal, window, 5.0, deterministic=True, softmax_scale=0.5)


SCHEDULES = [(False, FULL, "ascending"), (False, FULL, "shift"), (True, FULL, "descending"),
             (True, FULL, "symmetric_shift"), (True, FULL, "fa3_baseline"), (True, (100, 0), "diagonal")]


@pytest.mark.parametrize("causal,window,schedule", SCHEDULES, ids=[s[2] for s in SCHEDULES])
def test_schedules(causal, window, schedule):
    """Every deterministic order with softcap: correct, and repeated bitwise."""
    q, k, v, dout = make_qkv(2, 1024, 1024, 4, 128, BF16, seed=50)
    q, k = amplify(q, k, 20.0)
    out, lse = run_fwd(q, k, v, causal, window, softcap=20.0)
    grads = run_bwd(dout, q, k, v, out, lse, causal, window, deterministic=True, schedule=schedule, softcap=20.0)
    check_backward(dout, q, k, v, grads, causal, window, 20.0)
    again = run_bwd(dout, q, k, v, out, lse, causal, window, deterministic=True, schedule=schedule, softcap=20.0)
    assert all(torch.equal(a, b) for a, b in zip(grads, again))


# --- rows that see no key ------------------------------------------------------------------------

NO_KEY = [  # seqlen_q, seqlen_k, causal, window: none of the lengths a tile multiple
    (300, 113, True, FULL),        # rows 0..186 see no key
    (1000, 17, True, FULL),
    (257, 100, True, (30, 0)),     # rows 0..156
    (500, 129, False, (0, 0)),     # rows 0..370
]


@pytest.mark.parametrize("seqlen_q,seqlen_k,causal,window", NO_KEY,
                         ids=[f"{sq}x{sk}-{_mask_id(c, w)}" for sq, sk, c, w in NO_KEY])
@pytest.mark.parametrize("head_dim", [64, 128])
def test_rows_without_keys(head_dim, seqlen_q, seqlen_k, causal, window):
    """Out 0, lse -inf and dq 0 for rows that see no key, nothing NaN or inf anywhere (the -inf
    LSE rows and the padding rows of partial tiles must not reach dk / dv through the cap's
    derivative), both backward modes, the forward's own out / lse fed to the backward."""
    dtype = BF16 if head_dim == 128 else FP16
    rows_see, _ = visibility(seqlen_q, seqlen_k, causal, window)
    assert (~rows_see).any(), "the case must have rows without keys"
    q, k, v, dout = make_qkv(2, seqlen_q, seqlen_k, 4, head_dim, dtype, heads_kv=2, seed=seqlen_q + head_dim)
    q, k = amplify(q, k, 20.0)
    out, lse = run_fwd(q, k, v, causal, window, softcap=20.0)
    assert torch.isfinite(out).all()
    check_forward(q, k, v, out, lse, causal, window, 20.0)
    for deterministic in (True, False):
        grads = run_bwd(dout, q, k, v, out, lse, causal, window, deterministic=deterministic, softcap=20.0)
        for name, g in zip(("dq", "dk", "dv"), grads):
            assert torch.isfinite(g).all(), f"{name}: NaN or inf (deterministic={deterministic})"
        check_backward(dout, q, k, v, grads, causal, window, 20.0)


# --- softcap 0 and a huge softcap ------------------------------------------------------------------

@pytest.mark.parametrize("causal,window,head_dim,dtype", [(False, FULL, 128, BF16), (True, FULL, 64, FP16),
                                                          (False, (63, 63), 128, FP16), (True, (100, 0), 64, BF16)])
def test_softcap_zero_is_bitwise_no_softcap(causal, window, head_dim, dtype):
    q, k, v, dout = make_qkv(2, 777, 1000, 8, head_dim, dtype, heads_kv=2, seed=60)
    out, lse = dash.attn_fwd(q, k, v, causal=causal, window_size=window)
    out0, lse0 = dash.attn_fwd(q, k, v, causal=causal, window_size=window, softcap=0.0)
    assert torch.equal(out, out0) and torch.equal(lse, lse0)
    grads = dash.attn_bwd(dout, q, k, v, out, lse, causal=causal, deterministic=True, window_size=window)
    grads0 = dash.attn_bwd(dout, q, k, v, out, lse, causal=causal, deterministic=True, window_size=window,
                           softcap=0.0)
    for name, a, b in zip(("dq", "dk", "dv"), grads, grads0):
        assert torch.equal(a, b), f"{name}: softcap=0.0 differs from no softcap"
    leaves = [t.detach().clone().requires_grad_() for t in (q, k, v)]
    fai_out = fai.flash_attn_func(*leaves, causal=causal, window_size=window, softcap=0.0, deterministic=True)
    fai_out.backward(dout)
    assert torch.equal(fai_out, out)
    for a, b in zip((t.grad for t in leaves), grads):
        assert torch.equal(a, b)


def test_softcap_zero_is_bitwise_no_softcap_varlen():
    x = make_varlen([300, 0, 1, 777, 129], [500, 3, 0, 640, 129], 4, 2, 128, BF16, seed=61)
    for causal in (False, True):
        out, lse = varlen_fwd(x, causal, FULL)
        out0, lse0 = varlen_fwd(x, causal, FULL, softcap=0.0)
        assert torch.equal(out, out0) and torch.equal(lse, lse0)
        grads = varlen_bwd(x, out, lse, causal, FULL, True)
        grads0 = varlen_bwd(x, out, lse, causal, FULL, True, softcap=0.0)
        assert all(torch.equal(a, b) for a, b in zip(grads, grads0))


@pytest.mark.parametrize("causal,window", [(False, FULL), (True, (100, 0))], ids=["full", "window"])
def test_huge_softcap_is_close_to_no_softcap(causal, window):
    """softcap = 1e6 leaves scores of a few units unchanged (s - s^3 / (3 c^2)): the capped
    kernels give the uncapped reference's result to the tolerances (and tanh.approx's bound)."""
    q, k, v, dout = make_qkv(2, 1000, 777, 4, 128, BF16, heads_kv=2, seed=62)
    out, lse = run_fwd(q, k, v, causal, window, softcap=1e6)
    check_forward(q, k, v, out, lse, causal, window, 0.0, lse_tol=lse_atol(1e6, q, k))
    grads = run_bwd(dout, q, k, v, out, lse, causal, window, deterministic=True, softcap=1e6)
    check_backward(dout, q, k, v, grads, causal, window, 0.0)
    plain_out, plain_lse = run_fwd(q, k, v, causal, window)
    finite = torch.isfinite(plain_lse)
    assert torch.equal(torch.isfinite(lse), finite)
    assert (lse - plain_lse)[finite].abs().max() <= lse_atol(1e6, q, k)


# --- rows whose every score sits at one end of the cap ---------------------------------------------

# The bf16 softcap kernels at 192, 192 / 128 and 256 scale P by a fixed power of two instead of each
# row's running max where the cap allows (traits.py "fwd_capped_softmax"; csrc/kernels/common/
# score_scale.h: softcap * log2(e) <= 73); larger caps, fp16 and the other head dims keep the running
# max. So the caps straddle the limit (50.59 | 50.61).
CAP_END_CAPS = [1.0, 30.0, 50.0, 50.59, 50.61, 100.0]


def rows_at_the_cap_ends(batch, seqlen_q, seqlen_k, heads, head_dim, softcap, seed):
    """q and k sharing a direction u strongly enough that every scaled score is beyond 2 softcap in
    size: rows of q along +u see only capped scores near +softcap, rows along -u only near -softcap.
    v scaled by 1e3 in even heads, by 1e-3 in odd ones."""
    q, k, v, dout = make_qkv(batch, seqlen_q, seqlen_k, heads, head_dim, BF16, seed=seed)
    gen = torch.Generator(device="cuda").manual_seed(seed + 1)
    u = torch.randn(head_dim, generator=gen, device="cuda")
    u = u / u.norm()
    g = math.sqrt(5 * softcap * math.sqrt(head_dim))  # (g u) . (g u) / sqrt(d) = 5 softcap
    sign = torch.where(torch.rand(batch, seqlen_q, heads, 1, generator=gen, device="cuda") < 0.5, -1.0, 1.0)
    q = (0.3 * q.float() + sign * g * u).to(BF16)
    k = (0.3 * k.float() + g * u).to(BF16)
    v = (v.float() * torch.where(torch.arange(heads, device="cuda") % 2 == 0, 1e3, 1e-3)[:, None]).to(BF16)
    return q, k, v, dout


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("softcap", CAP_END_CAPS)
@pytest.mark.parametrize("head_dim,seqlen", [(64, 1000), (64, 2049), (96, 700), (128, 1000), (128, 2049), (192, 333),
                                             (256, 1000)])
def test_rows_at_either_end_of_the_cap(head_dim, seqlen, softcap, causal):
    """Rows whose capped scores all lie near +softcap or all near -softcap (nothing for a running
    max to tell apart; the fixed offset puts their P at the two ends of its range, bench/RESULTS.md
    items 207 and 210), v scaled by 1e3 or 1e-3 by head, against the fp64 reference: no row's P, sum
    or O under- or overflows, on either side of the fixed offset's limit. (The backward takes only the LSE from the forward,
    checked here; its derivative on saturated scores is test_matches_reference's.)"""
    q, k, v, _ = rows_at_the_cap_ends(2, seqlen, seqlen, 4, head_dim, softcap, seed=head_dim + seqlen)
    scores = torch.einsum("bqhd,bkhd->bhqk", q[:1, :64].float(), k[:1].float()) / math.sqrt(head_dim)
    assert scores.abs().min() > 2 * softcap, "the rows do not sit at the cap's ends: the test tests nothing"
    out, lse = run_fwd(q, k, v, causal, FULL, softcap=softcap)
    assert torch.isfinite(out).all() and torch.isfinite(lse).all()
    check_forward(q, k, v, out, lse, causal, FULL, softcap)


@pytest.mark.parametrize("dtype", [BF16, FP16], ids=["bf16", "fp16"])
@pytest.mark.parametrize("seqlen", [1000, 2049])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("head_dim", SQUARE_HEAD_DIMS)
def test_softcap_calls_run_the_kernel_the_table_gives(head_dim, causal, seqlen, dtype):
    """A forward call with softcap > 0 runs the fixed-offset softcap kernel (FwdConfig's last flag)
    where the trait table gives one ("fwd_capped_softmax": "fixed_offset", bf16, the main walk),
    and the plain kernel, whose capped walk sits beside its plain one, otherwise; a call without
    softcap always the plain kernel."""
    from dash import _traits, capabilities
    q, k, v, _ = make_qkv(1, seqlen, seqlen, 2, head_dim, dtype, seed=seqlen + head_dim)
    traits = capabilities.capabilities()["traits"]
    for softcap in (0.0, 30.0):
        names = [n for n in launched_kernels(lambda: run_fwd(q, k, v, causal, FULL, softcap=softcap))
                 if "attn_fwd_sm90_kernel" in n]
        assert len(names) == 1, names
        short = capabilities.fwd_takes_short_walk(head_dim, banded=causal, seqlen_k=seqlen, dtype=dtype,
                                                  softcap=softcap)
        assert short == (causal and seqlen <= _traits.FWD_SHORT_MAX_SEQLEN_K.get((head_dim, head_dim), 0))
        fixed_offset = (softcap > 0 and not short and dtype == BF16 and
                        traits["fwd_capped_softmax"][str(head_dim)] == "fixed_offset")
        flags = fwd_kernel_flags(names[0])
        assert (flags["short_walk"], flags["fixed_offset_softcap"]) == (short, fixed_offset), names[0]


@pytest.mark.parametrize("softcap", [5.0, 50.0, 100.0])
@pytest.mark.parametrize("head_dim", SQUARE_HEAD_DIMS)
def test_a_row_that_sees_one_key_gets_its_v_exactly(head_dim, softcap):
    """window (0, 0): each row sees one key, so out is that key's v bit for bit, as with the running
    max (a row's largest P exactly 1); the fixed offset divides O by the sums of P as the P V GEMM
    took it (a GEMM of P with ones), which makes it so again (bench/RESULTS.md items 207, 210)."""
    q, k, v, _ = make_qkv(2, 700, 700, 4, head_dim, BF16, seed=head_dim + int(softcap))
    q, k = amplify(q, k, softcap)
    out, lse = run_fwd(q, k, v, False, (0, 0), softcap=softcap)
    assert torch.equal(out, v), (out.float() - v.float()).abs().max()
    check_forward(q, k, v, out, lse, False, (0, 0), softcap)


# --- packed (variable-length) batches --------------------------------------------------------------

def check_varlen(x, out, lse, grads, causal, window, softcap):
    dtype = x["q"].dtype
    cu = (x["cu_q"], x["cu_k"])
    rows_see, keys_seen = varlen_visibility(x, causal, window)
    if out is not None:
        ref_out, ref_lse = reference.attention_varlen_forward(x["q"].double(), x["k"].double(), x["v"].double(), *cu,
                                                              causal=causal, compute_dtype=torch.float64,
                                                              window_size=window, softcap=softcap)
        pt_out, _ = reference.attention_varlen_forward(x["q"], x["k"], x["v"], *cu, causal=causal, compute_dtype=dtype,
                                                       window_size=window, softcap=softcap)
        assert out.shape == x["q"].shape and out.dtype == dtype
        assert_close_fa_style("out", out, ref_out, pt_out, dtype)
        check_lse(lse, ref_lse, lse_atol(softcap, x["q"], x["k"]))
        assert torch.equal(torch.isneginf(ref_lse).all(0), ~rows_see)
        if (~rows_see).any():
            assert out[~rows_see].abs().max() == 0, "rows that see no key must get out 0"
    args = (x["dout"], x["q"], x["k"], x["v"], *cu)
    ref = reference.attention_varlen_backward(*args, causal=causal, compute_dtype=torch.float64, window_size=window,
                                              softcap=softcap)
    pt = reference.attention_varlen_backward(*args, causal=causal, compute_dtype=dtype, window_size=window,
                                             softcap=softcap)
    for name, ours, r, p, seen in zip(("dq", "dk", "dv"), grads, ref, pt, (rows_see, keys_seen, keys_seen)):
        assert ours.shape == r.shape and ours.dtype == dtype
        assert torch.isfinite(ours).all(), f"{name}: NaN or inf"
        assert_close_fa_style(name, ours, r, p, dtype, GRAD_SOFTCAP_ATOL)
        if (~seen).any():
            assert ours[~seen].abs().max() == 0, f"{name}: rows / keys outside every band must get 0"


MIXES = {
    "tiny": ([0, 1, 17, 0, 128, 1, 129, 5], None),
    "mixed": ([300, 1, 2049, 0, 64, 1000, 17], None),
    "unequal": ([200, 0, 1, 777, 128], [500, 3, 0, 640, 1]),
}


@pytest.mark.parametrize("causal,window", MASKS, ids=[_mask_id(*m) for m in MASKS])
@pytest.mark.parametrize("mix", sorted(MIXES))
def test_varlen_matches_reference(mix, causal, window):
    """Packed batches with empty and 1-token sequences (and, unequal, sequences with no keys):
    head dim, dtype, cap, heads and backward mode rotate over the 12 cases."""
    i, j = MASKS.index((causal, window)), sorted(MIXES).index(mix)
    head_dim = (64, 128)[(i + j) % 2]
    dtype = (BF16, FP16)[(i + j) // 2 % 2]
    softcap = CAPS[(i + 2 * j) % len(CAPS)]
    heads, heads_kv = [(4, 2), (4, 1), (3, 3)][(i + j) % 3]
    deterministic = (i + 2 * j) % 3 != 0
    x = make_varlen(*MIXES[mix], heads, heads_kv, head_dim, dtype, seed=70 + 10 * i + j)
    x["q"], x["k"] = amplify(x["q"], x["k"], softcap)
    out, lse = varlen_fwd(x, causal, window, softcap=softcap)
    assert lse.shape == (heads, x["q"].shape[0])
    grads = varlen_bwd(x, out, lse, causal, window, deterministic, softcap=softcap)
    check_varlen(x, out, lse, grads, causal, window, softcap)


# --- determinism --------------------------------------------------------------------------------

REPEATS = 50

BITWISE_FIXED = [  # batch, heads, heads_kv, seqlen_q, seqlen_k, head_dim, causal, window, softcap
    (2, 8, 8, 2048, 2048, 128, True, FULL, 30.0),
    (1, 16, 4, 4097, 1000, 64, False, FULL, 5.0),  # bf16 at 64 (the main walk): the fixed-offset kernel
    (2, 8, 2, 2049, 2049, 128, True, (257, 0), 50.0),
    (1, 4, 2, 1000, 1000, 256, True, FULL, 30.0),  # bf16 at 256: the fixed-offset kernel
    (1, 4, 2, 1000, 1000, 256, False, FULL, 30.0),  # 256's full-mask softcap backward (dK before dQ)
]


@pytest.mark.parametrize("batch,heads,heads_kv,seqlen_q,seqlen_k,head_dim,causal,window,softcap", BITWISE_FIXED)
def test_bitwise_reproducible(batch, heads, heads_kv, seqlen_q, seqlen_k, head_dim, causal, window, softcap):
    q, k, v, dout = make_qkv(batch, seqlen_q, seqlen_k, heads, head_dim, BF16, heads_kv=heads_kv, seed=80)
    q, k = amplify(q, k, softcap)
    out, lse = run_fwd(q, k, v, causal, window, softcap=softcap)
    first = run_bwd(dout, q, k, v, out, lse, causal, window, deterministic=True, softcap=softcap)
    for i in range(REPEATS - 1):
        again = run_bwd(dout, q, k, v, out, lse, causal, window, deterministic=True, softcap=softcap)
        for name, a, b in zip(("dq", "dk", "dv"), first, again):
            assert torch.equal(a, b), f"{name} differs from the first run at repeat {i + 1}"
        out2, lse2 = run_fwd(q, k, v, causal, window, softcap=softcap)
        assert torch.equal(out, out2) and torch.equal(lse, lse2), f"forward differs at repeat {i + 1}"
    check_backward(dout, q, k, v, first, causal, window, softcap)


BITWISE_PACKED = [  # lengths q, lengths k, heads, heads_kv, head_dim, causal, window, softcap
    ([4096, 17, 1, 2048, 6000, 129, 0, 4093], None, 16, 4, 128, True, FULL, 30.0),
    ([3000, 1, 700, 5000, 129, 2100], [2000, 5, 1500, 5000, 0, 2500], 8, 2, 64, False, (63, 257), 20.0),
    ([1000, 3000, 2048, 512, 9000, 823], None, 8, 8, 64, False, FULL, 50.0),
    ([700, 1, 2049, 333], None, 4, 2, 192, True, FULL, 30.0),  # the fixed-offset kernel, packed
]


@pytest.mark.parametrize("lengths_q,lengths_k,heads,heads_kv,head_dim,causal,window,softcap", BITWISE_PACKED)
def test_varlen_bitwise_reproducible(lengths_q, lengths_k, heads, heads_kv, head_dim, causal, window, softcap):
    x = make_varlen(lengths_q, lengths_k, heads, heads_kv, head_dim, BF16, seed=81)
    x["q"], x["k"] = amplify(x["q"], x["k"], softcap)
    out, lse = varlen_fwd(x, causal, window, softcap=softcap)
    first = varlen_bwd(x, out, lse, causal, window, True, softcap=softcap)
    for i in range(REPEATS - 1):
        again = varlen_bwd(x, out, lse, causal, window, True, softcap=softcap)
        for name, a, b in zip(("dq", "dk", "dv"), first, again):
            assert torch.equal(a, b), f"{name} differs from the first run at repeat {i + 1}"
    out2, lse2 = varlen_fwd(x, causal, window, softcap=softcap)
    assert torch.equal(out, out2) and torch.equal(lse, lse2)
    assert all(torch.isfinite(g).all() for g in first)


# --- flash_attn_interface ------------------------------------------------------------------------

@pytest.mark.parametrize("causal,window,head_dim,dtype", [(True, FULL, 128, BF16), (False, (63, 63), 64, FP16),
                                                          (False, FULL, 64, BF16)])
def test_flash_attn_func_autograd(causal, window, head_dim, dtype):
    """flash_attn_func's softcap reaches the forward and, through autograd, the backward: the
    reference's result, and bitwise the ops'."""
    softcap = 30.0
    q, k, v, dout = make_qkv(2, 777, 1000, 8, head_dim, dtype, heads_kv=2, seed=90 + head_dim)
    q, k = amplify(q, k, softcap)
    leaves = [t.detach().clone().requires_grad_() for t in (q, k, v)]
    out, lse = fai.flash_attn_func(*leaves, causal=causal, window_size=window, softcap=softcap, deterministic=True,
                                   return_attn_probs=True)
    out.backward(dout)
    grads = tuple(t.grad for t in leaves)
    check_forward(q, k, v, out.detach(), lse, causal, window, softcap)
    check_backward(dout, q, k, v, grads, causal, window, softcap)
    ops_out, ops_lse = dash.attn_fwd(q, k, v, causal=causal, window_size=window, softcap=softcap)
    assert torch.equal(out, ops_out) and torch.equal(lse, ops_lse)
    ops_grads = dash.attn_bwd(dout, q, k, v, ops_out, ops_lse, causal=causal, deterministic=True,
                              window_size=window, softcap=softcap)
    for name, a, b in zip(("dq", "dk", "dv"), grads, ops_grads):
        assert torch.equal(a, b), f"{name}: autograd's backward is not attn_bwd with the softcap"


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_flash_attn_varlen_func_autograd(causal):
    softcap = 30.0
    x = make_varlen([300, 1, 0, 777, 129], [500, 3, 17, 640, 129], 8, 2, 128, BF16, seed=95)
    x["q"], x["k"] = amplify(x["q"], x["k"], softcap)
    leaves = [x[n].detach().clone().requires_grad_() for n in ("q", "k", "v")]
    out, lse = fai.flash_attn_varlen_func(*leaves, x["cu_q"], x["cu_k"], x["max_q"], x["max_k"], causal=causal,
                                          softcap=softcap, deterministic=True, return_attn_probs=True)
    out.backward(x["dout"])
    grads = tuple(t.grad for t in leaves)
    check_varlen(x, out.detach(), lse, grads, causal, FULL, softcap)
    ops_out, ops_lse = varlen_fwd(x, causal, FULL, softcap=softcap)
    assert torch.equal(out, ops_out) and torch.equal(lse, ops_lse)
    for a, b in zip(grads, varlen_bwd(x, ops_out, ops_lse, causal, FULL, True, softcap=softcap)):
        assert torch.equal(a, b)


# --- invalid softcap -----------------------------------------------------------------------------

def _calls_on_cuda(softcap):
    """(name, thunk) for every entry point taking softcap, on valid CUDA inputs."""
    q, k, v, dout = make_qkv(2, 64, 80, 4, 64, BF16, heads_kv=2, seed=1)
    out = torch.zeros_like(q)
    lse = torch.zeros(2, 4, 64, dtype=torch.float32, device="cuda")
    x = make_varlen([30, 34], [40, 40], 4, 2, 64, BF16, seed=2)
    vlse = torch.zeros(4, 64, dtype=torch.float32, device="cuda")
    vargs = (x["cu_q"], x["cu_k"], x["max_q"], x["max_k"])
    return {
        "attn_fwd": lambda: dash.attn_fwd(q, k, v, softcap=softcap),
        "attn_bwd": lambda: dash.attn_bwd(dout, q, k, v, out, lse, causal=True, softcap=softcap),
        "attn_bwd_plan": lambda: dash.attn_bwd_plan(q, k, softcap=softcap),
        "attn_varlen_fwd": lambda: dash.attn_varlen_fwd(x["q"], x["k"], x["v"], *vargs, softcap=softcap),
        "attn_varlen_bwd": lambda: dash.attn_varlen_bwd(x["dout"], x["q"], x["k"], x["v"], x["q"], vlse, *vargs,
                                                        softcap=softcap),
        "attn_varlen_bwd_plan": lambda: dash.attn_varlen_bwd_plan(x["q"], x["k"], *vargs, softcap=softcap),
        "flash_attn_func": lambda: fai.flash_attn_func(q, k, v, softcap=softcap),
        "flash_attn_varlen_func": lambda: fai.flash_attn_varlen_func(x["q"], x["k"], x["v"], *vargs, softcap=softcap),
    }


OPS = ["attn_fwd", "attn_bwd", "attn_bwd_plan", "attn_varlen_fwd", "attn_varlen_bwd", "attn_varlen_bwd_plan",
       "flash_attn_func", "flash_attn_varlen_func"]


@pytest.mark.parametrize("softcap", [-1.0, -1e-3, float("nan"), float("inf"), float("-inf")], ids=str)
@pytest.mark.parametrize("op", OPS)
def test_invalid_softcap_raises(op, softcap):
    with pytest.raises(ValueError, match="softcap must be finite and >= 0"):
        _calls_on_cuda(softcap)[op]()


# --- torch.library.opcheck -----------------------------------------------------------------------

OPCHECK = [(100, 100, True, FULL, 5.0), (77, 200, False, (16, 3), 20.0)]


@pytest.mark.parametrize("seqlen_q,seqlen_k,causal,window,softcap", OPCHECK)
def test_opcheck_attn_fwd(seqlen_q, seqlen_k, causal, window, softcap):
    q, k, v, _ = make_qkv(2, seqlen_q, seqlen_k, 2, 64, BF16, seed=7)
    q, k = amplify(q, k, softcap)
    for t in (q, k, v):
        t.requires_grad_()
    torch.library.opcheck(torch.ops.dash.attn_fwd.default,
                          (q, k, v, 0.125, causal, True, 0, "auto", *window, softcap))


@pytest.mark.parametrize("seqlen_q,seqlen_k,causal,window,softcap", OPCHECK)
def test_opcheck_attn_bwd(seqlen_q, seqlen_k, causal, window, softcap):
    q, k, v, dout = make_qkv(2, seqlen_q, seqlen_k, 2, 128, BF16, seed=8)
    q, k = amplify(q, k, softcap)
    out, lse = dash.attn_fwd(q, k, v, causal=causal, window_size=window, softcap=softcap)
    torch.library.opcheck(torch.ops.dash.attn_bwd.default,
                          (dout, q, k, v, out, lse, 128 ** -0.5, causal, True, 0, "auto", None, None, *window, softcap))


def test_opcheck_attn_varlen():
    softcap = 10.0
    x = make_varlen([50, 0, 17, 129], [70, 3, 17, 100], 4, 2, 64, BF16, seed=6)
    x["q"], x["k"] = amplify(x["q"], x["k"], softcap)
    q, k, v = (x[n].detach().clone().requires_grad_() for n in ("q", "k", "v"))
    torch.library.opcheck(torch.ops.dash.attn_varlen_fwd.default,
                          (q, k, v, x["cu_q"], x["cu_k"], None, None, x["max_q"], x["max_k"], 0.125, True, True, 0,
                           "auto", -1, -1, softcap))
    out, lse = varlen_fwd(x, True, FULL, softmax_scale=0.125, softcap=softcap)
    torch.library.opcheck(torch.ops.dash.attn_varlen_bwd.default,
                          (x["dout"], x["q"], x["k"], x["v"], out, lse, x["cu_q"], x["cu_k"], None, None, x["max_q"],
                           x["max_k"], 0.125, True, True, 0, "auto", None, None, -1, -1, softcap))
