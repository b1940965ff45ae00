"""GPU: the forward op dash::attn_fwd. out and softmax_lse against an fp64 reference
(both head dims, dtypes and masks; sequence lengths that are not tile multiples and
seqlen_q != seqlen_k both ways, so causal rows that see no key occur: out 0, lse -inf),
outputs poisoned with NaN first; bitwise reproducibility; strided and unaligned inputs;
torch.library.opcheck of both ops."""
import pytest
import torch

import dash
from conftest import requires_hopper
from dash import reference
from dash._traits import FWD_KV_MULTICAST_MIN_SEQLEN_K, FWD_LAZY_RESCALE, FWD_SHORT_MAX_SEQLEN_K, head_dim_name
from gpu_helpers import assert_close_fa_style, check_lse, fwd_kernel_flags, launched_kernels, poison_allocator

pytestmark = requires_hopper

SEQLENS = [(1, 1), (17, 17), (113, 113), (128, 128), (1000, 1000), (2048, 2048), (4097, 4097), (113, 203),
           (203, 113), (1, 300), (300, 1), (1000, 2048), (2048, 1000)]


def make_qkv(batch, seqlen_q, seqlen_k, heads, head_dim, dtype, seed=0):
    gen = torch.Generator(device="cuda").manual_seed(seed)
    q = torch.randn(batch, seqlen_q, heads, head_dim, generator=gen, device="cuda", dtype=dtype)
    k = torch.randn(batch, seqlen_k, heads, head_dim, generator=gen, device="cuda", dtype=dtype)
    v = torch.randn(batch, seqlen_k, heads, head_dim, generator=gen, device="cuda", dtype=dtype)
    return q, k, v


def run_fwd(q, k, v, **kw):
    """dash.attn_fwd with NaN-poisoned allocations for out and lse."""
    batch, seqlen_q, heads, _ = q.shape
    poison_allocator(q, torch.empty(batch, heads, seqlen_q, dtype=torch.float32, device=q.device))
    return dash.attn_fwd(q, k, v, **kw)


def check_forward(q, k, v, out, lse, causal, softmax_scale=None):
    dtype = q.dtype
    ref_out, ref_lse = reference.attention_forward(q.double(), k.double(), v.double(), softmax_scale, causal,
                                                   compute_dtype=torch.float64)
    pt_out, _ = reference.attention_forward(q, k, v, softmax_scale, causal, compute_dtype=dtype)
    assert out.shape == (*q.shape[:-1], v.shape[-1]) and out.dtype == dtype and out.is_contiguous()
    assert_close_fa_style("out", out, ref_out, pt_out, dtype)
    check_lse(lse, ref_lse)
    seqlen_q, seqlen_k = q.shape[1], k.shape[1]
    if causal and seqlen_q > seqlen_k:  # the first seqlen_q - seqlen_k rows see no key
        assert torch.equal(out[:, :seqlen_q - seqlen_k], torch.zeros_like(out[:, :seqlen_q - seqlen_k]))


@pytest.mark.parametrize("seqlen_q,seqlen_k", SEQLENS)
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "fp16"])
@pytest.mark.parametrize("head_dim", [64, 128])
def test_matches_reference(head_dim, dtype, causal, seqlen_q, seqlen_k):
    big = seqlen_q * seqlen_k > 1_000_000
    batch, heads = (1, 2) if big else (2, 3)
    q, k, v = make_qkv(batch, seqlen_q, seqlen_k, heads, head_dim, dtype, seed=seqlen_q * 7919 + seqlen_k + head_dim)
    out, lse = run_fwd(q, k, v, causal=causal)
    check_forward(q, k, v, out, lse, causal)


@pytest.mark.parametrize("growth", [0.001, 0.04, 0.2], ids=["kept", "some", "every"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "fp16"])
@pytest.mark.parametrize("head_dim", [qk for qk, v in FWD_LAZY_RESCALE if qk == v])
def test_running_max_that_grows(head_dim, dtype, causal, growth):
    """Scores that rise toward the first key by `growth` log2 units a key: the forward walks KV
    tiles last to first, so the running max grows every tile, by 0.13 log2 units a 128-key tile
    (never past the lazy rescale's threshold of 8: O is never rescaled), 5.1 (now and then) or
    25.6 (every tile; 16 at hdim 256's 80 keys). Random scores almost never take the rescale path
    after the first tile. At the head dims whose forward rescales lazily (the trait table)."""
    seqlen_q, seqlen_k = (777, 1531) if causal else (1000, 1000)
    q, k, v = make_qkv(2, seqlen_q, seqlen_k, 3, head_dim, dtype, seed=int(growth * 1000) + head_dim)
    per_key = growth / (head_dim ** -0.5 * 1.4426950408889634)  # raw score units a key
    q[..., 0] = 1.0
    k[..., 0] = per_key * torch.arange(seqlen_k - 1, -1, -1, device="cuda", dtype=torch.float32).view(1, -1, 1).to(dtype)
    out, lse = run_fwd(q, k, v, causal=causal)
    check_forward(q, k, v, out, lse, causal)


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_softmax_scale(causal):
    q, k, v = make_qkv(2, 300, 100, 2, 128, torch.bfloat16, seed=5)
    out, lse = run_fwd(q, k, v, softmax_scale=0.37, causal=causal)
    check_forward(q, k, v, out, lse, causal, softmax_scale=0.37)


@pytest.mark.parametrize("batch,heads,seqlen_q,seqlen_k,head_dim,causal", [
    (2, 8, 2048, 2048, 128, True),
    (1, 4, 4097, 4097, 64, False),
    (3, 5, 1000, 1531, 128, True),
    (3, 5, 1531, 1000, 64, True),
])
def test_bitwise_reproducible(batch, heads, seqlen_q, seqlen_k, head_dim, causal):
    q, k, v = make_qkv(batch, seqlen_q, seqlen_k, heads, head_dim, torch.bfloat16, seed=3)
    first_out, first_lse = run_fwd(q, k, v, causal=causal)
    for i in range(4):
        out, lse = run_fwd(q, k, v, causal=causal)
        assert torch.equal(out, first_out), f"out differs from the first run at repeat {i + 1}"
        assert torch.equal(lse, first_lse), f"softmax_lse differs from the first run at repeat {i + 1}"


SHORT_WALK_LIMIT = FWD_SHORT_MAX_SEQLEN_K[(64, 64)]


@pytest.mark.parametrize("seqlen", sorted({1000, SHORT_WALK_LIMIT, SHORT_WALK_LIMIT + 1, 1536, 2048, 4097}))
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "fp16"])
def test_short_walk_kernel_runs_where_the_table_says(dtype, causal, seqlen):
    """hdim 64's short-walk kernel (its own 128 x 128 tile, traits.py "fwd_short") runs a banded
    call with at most max_seqlen_k keys and nothing else: the kernel that ran (its template
    arguments, read from the profiler) is the one capabilities.fwd_takes_short_walk names, and
    its output matches the reference on both sides of the limit."""
    from dash import capabilities
    q, k, v = make_qkv(1, seqlen, seqlen, 3, 64, dtype, seed=seqlen + int(causal))
    result = {}
    names = launched_kernels(lambda: result.update(zip(("out", "lse"), run_fwd(q, k, v, causal=causal))))
    fwd = [n for n in names if "attn_fwd_sm90_kernel" in n]
    assert len(fwd) == 1, names
    short = capabilities.fwd_takes_short_walk(64, banded=causal, seqlen_k=seqlen, dtype=dtype)
    flags = fwd_kernel_flags(fwd[0])
    assert flags["mask"] == ("BandMask" if causal else "FullMask") and flags["short_walk"] == short, fwd[0]
    assert not flags["fixed_offset_softcap"], fwd[0]
    limit = capabilities.capabilities()["traits"]["fwd_short"]["64"]["max_seqlen_k"]
    compiled = [64, 64, {torch.bfloat16: "bfloat16", torch.float16: "float16"}[dtype], "band", "short"] in \
        capabilities.capabilities()["compiled"]["fwd"]
    assert short == (causal and seqlen <= limit and compiled)
    check_forward(q, k, v, result["out"], result["lse"], causal)


def _strided_layouts(q, k, v):
    """(name, q, k, v) with the same values in non-contiguous layouts."""
    batch, seqlen, heads, head_dim = q.shape
    packed = torch.stack((q, k, v), dim=2)  # (batch, seqlen, 3, heads, d): 16-byte-aligned strides
    heads_first = [t.transpose(1, 2).contiguous().transpose(1, 2) for t in (q, k, v)]  # from (b, h, s, d)

    def unaligned(t):  # base pointer 2 bytes off 16-byte alignment: copied before TMA
        flat = torch.empty(t.numel() + 1, dtype=t.dtype, device=t.device)
        view = flat[1:].view(t.shape)
        view.copy_(t)
        return view

    return [("packed", *packed.unbind(2)), ("heads_first", *heads_first),
            ("unaligned", *(unaligned(t) for t in (q, k, v)))]


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("head_dim", [64, 128])
def test_strided_inputs(head_dim, causal):
    """Layouts with a contiguous last dim give bitwise the contiguous result."""
    q, k, v = make_qkv(2, 777, 777, 4, head_dim, torch.bfloat16, seed=11)
    expected_out, expected_lse = run_fwd(q, k, v, causal=causal)
    check_forward(q, k, v, expected_out, expected_lse, causal)
    for name, qs, ks, vs in _strided_layouts(q, k, v):
        assert torch.equal(qs, q)
        assert qs.data_ptr() % 16 != 0 if name == "unaligned" else not qs.is_contiguous()
        out, lse = run_fwd(qs, ks, vs, causal=causal)
        assert out.is_contiguous(), name
        assert torch.equal(out, expected_out), f"{name}: out differs from the contiguous inputs' out"
        assert torch.equal(lse, expected_lse), f"{name}: softmax_lse differs"


@pytest.mark.parametrize("seqlen_q,seqlen_k,causal", [(100, 100, False), (64, 200, True), (200, 64, True)])
def test_opcheck_attn_fwd(seqlen_q, seqlen_k, causal):
    q, k, v = make_qkv(2, seqlen_q, seqlen_k, 2, 64, torch.bfloat16, seed=7)
    for t in (q, k, v):
        t.requires_grad_()
    torch.library.opcheck(torch.ops.dash.attn_fwd.default, (q, k, v, 0.125, causal, True))


@pytest.mark.parametrize("with_trace", [False, True], ids=["plain", "trace"])
@pytest.mark.parametrize("seqlen_q,seqlen_k,causal", [(100, 100, False), (200, 64, True)])
def test_opcheck_attn_bwd(seqlen_q, seqlen_k, causal, with_trace):
    q, k, v = make_qkv(2, seqlen_q, seqlen_k, 2, 128, torch.bfloat16, seed=8)
    out, lse = dash.attn_fwd(q, k, v, causal=causal)
    dout = torch.randn_like(out)
    trace = dash.trace_buffers(2, 2, seqlen_q, seqlen_k, 128, "cuda") if with_trace else (None, None)
    torch.library.opcheck(torch.ops.dash.attn_bwd.default,
                          (dout, q, k, v, out, lse, 128 ** -0.5, causal, True, 0, "auto", *trace))


# (seqlen_q, keys past the pair's limit L (seqlen_k = L + this, at least 1), heads, heads_kv, sm_margin):
# Q-tile counts even and odd, keys at, below and above the limit (ragged), GQA, a grid of one CTA
# (sm_margin: all SMs but one) and an odd grid.
KV_MULTICAST_CASES = [(4096, 0, 4, 4, 0), (1000, 1, 4, 4, 0), (1100, 0, 4, 4, 0), (256, -1, 4, 4, 0),
                      (256, 999, 8, 2, 0), (4096, 0, 4, 4, "all_but_one"), (2048, 0, 4, 4, 1), (2048, 47, 8, 1, 0)]


@pytest.mark.parametrize("case", KV_MULTICAST_CASES, ids=lambda c: "-".join(map(str, c)))
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "fp16"])
@pytest.mark.parametrize("pair", sorted(FWD_KV_MULTICAST_MIN_SEQLEN_K), ids=lambda p: "x".join(map(str, p)))
def test_kv_multicast_kernel_runs_where_its_tiles_pair_up(pair, dtype, causal, case):
    """The full-mask forward of the head dims the trait table names runs on 2-CTA clusters that
    multicast K / V ("fwd_kv_multicast_min_seqlen_k") exactly where a cluster's two CTAs get paired
    tiles: a fixed-length full-mask call with that many keys or more, an even Q-tile count and a
    grid of two or more; the kernel that ran is read from the profiler. Its output matches the
    reference and has the bits of the plain kernel's (a one-CTA grid, sm_margin = all SMs but one,
    runs that)."""
    from dash import capabilities
    head_dim, head_dim_v = pair
    seqlen_q, past_limit, heads, heads_kv, sm_margin = case
    seqlen_k = max(FWD_KV_MULTICAST_MIN_SEQLEN_K[pair] + past_limit, 1)
    sm_count = torch.cuda.get_device_properties(0).multi_processor_count
    if sm_margin == "all_but_one":
        sm_margin = sm_count - 1
    gen = torch.Generator(device="cuda").manual_seed(seqlen_q + 3 * seqlen_k + heads_kv + head_dim)
    q = torch.randn(1, seqlen_q, heads, head_dim, generator=gen, device="cuda", dtype=dtype)
    k = torch.randn(1, seqlen_k, heads_kv, head_dim, generator=gen, device="cuda", dtype=dtype)
    v = torch.randn(1, seqlen_k, heads_kv, head_dim_v, generator=gen, device="cuda", dtype=dtype)
    result = {}
    names = [n for n in launched_kernels(lambda: result.update(
        zip(("out", "lse"), run_fwd(q, k, v, causal=causal, sm_margin=sm_margin)))) if "attn_fwd_sm90_kernel" in n]
    assert len(names) == 1, names
    min_keys = capabilities.capabilities()["traits"]["fwd_kv_multicast_min_seqlen_k"][head_dim_name(*pair)]
    assert min_keys == FWD_KV_MULTICAST_MIN_SEQLEN_K[pair]
    q_tiles = -(-seqlen_q // capabilities.fwd_tile_shape(head_dim, head_dim_v)[0])
    grid = min(q_tiles * heads, sm_count - sm_margin)
    pairs_up = not causal and min_keys <= seqlen_k and q_tiles % 2 == 0 and grid >= 2
    assert fwd_kernel_flags(names[0])["kv_multicast"] == pairs_up, names[0]
    check_forward(q, k, v, result["out"], result["lse"], causal)
    plain_out, plain_lse = run_fwd(q, k, v, causal=causal, sm_margin=sm_count - 1)
    assert torch.equal(result["out"], plain_out) and torch.equal(result["lse"], plain_lse)


@pytest.mark.parametrize("case", [(4096, 0, 4, 4, 0), (1100, 0, 4, 4, 0), (2048, 0, 4, 4, 1), (2048, 47, 8, 2, 0)],
                         ids=lambda c: "-".join(map(str, c)))
@pytest.mark.parametrize("pair", sorted(FWD_KV_MULTICAST_MIN_SEQLEN_K), ids=lambda p: "x".join(map(str, p)))
def test_kv_multicast_softcap_kernel_has_the_plain_kernels_bits(pair, case):
    """bf16 softcap calls of a head dim with a fixed-offset softcap kernel ("fwd_capped_softmax") run its
    multicast form where the tiles pair up, as plain calls do, with the bits of that kernel on a
    one-CTA grid (whose agreement with the reference test_softcap checks)."""
    from dash import capabilities
    head_dim, head_dim_v = pair
    seqlen_q, past_limit, heads, heads_kv, sm_margin = case
    seqlen_k = max(FWD_KV_MULTICAST_MIN_SEQLEN_K[pair] + past_limit, 1)
    sm_count = torch.cuda.get_device_properties(0).multi_processor_count
    gen = torch.Generator(device="cuda").manual_seed(seqlen_q + seqlen_k + head_dim)
    q = 2 * torch.randn(1, seqlen_q, heads, head_dim, generator=gen, device="cuda", dtype=torch.bfloat16)
    k = 2 * torch.randn(1, seqlen_k, heads_kv, head_dim, generator=gen, device="cuda", dtype=torch.bfloat16)
    v = torch.randn(1, seqlen_k, heads_kv, head_dim_v, generator=gen, device="cuda", dtype=torch.bfloat16)
    result = {}
    names = [n for n in launched_kernels(lambda: result.update(
        zip(("out", "lse"), run_fwd(q, k, v, sm_margin=sm_margin, softcap=30.0)))) if "attn_fwd_sm90_kernel" in n]
    assert len(names) == 1, names
    flags = fwd_kernel_flags(names[0])
    fixed_offset = capabilities.capabilities()["traits"]["fwd_capped_softmax"][head_dim_name(*pair)] == "fixed_offset"
    q_tiles = -(-seqlen_q // capabilities.fwd_tile_shape(head_dim, head_dim_v)[0])
    pairs_up = seqlen_k >= FWD_KV_MULTICAST_MIN_SEQLEN_K[pair] and q_tiles % 2 == 0
    assert (flags["fixed_offset_softcap"], flags["kv_multicast"]) == (fixed_offset, pairs_up), names[0]
    plain_out, plain_lse = run_fwd(q, k, v, sm_margin=sm_count - 1, softcap=30.0)
    assert torch.equal(result["out"], plain_out) and torch.equal(result["lse"], plain_lse)
    assert torch.isfinite(result["out"]).all()


def test_packed_calls_run_the_plain_kernel():
    """A packed (varlen) call numbers its tiles document by document, so its CTAs' tiles do not
    pair up: it runs hdim 128's plain full-mask kernel, whatever its documents' lengths."""
    lengths = [4096, 2048, 4096]
    cu = torch.tensor([0, 4096, 6144, 10240], dtype=torch.int32, device="cuda")
    gen = torch.Generator(device="cuda").manual_seed(5)
    q, k, v = (torch.randn(sum(lengths), 4, 128, generator=gen, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    names = [n for n in launched_kernels(lambda: dash.attn_varlen_fwd(q, k, v, cu, cu, max(lengths), max(lengths)))
             if "attn_fwd_sm90_kernel" in n]
    assert len(names) == 1 and not fwd_kernel_flags(names[0])["kv_multicast"], names
