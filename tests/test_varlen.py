"""GPU: packed (variable-length) batches, forward and backward.

Against an fp64 reference computed one sequence at a time, on document mixes with 0- and
1-token documents, odd lengths, tile multiples and long documents, unequal q / k lengths,
GQA, both masks, dtypes and head dims, outputs poisoned first; seqused; 50-repeat bitwise
reproducibility and the recorded dQ order against the schedule model; a document after one whose
end a TMA-stored warp's rows cross keeps its own bits; the deterministic
backward beside a kernel that holds 40 SMs; invalid cu_seqlens as a device-side error."""
import itertools
import os
import subprocess
import sys
import time

import pytest
import torch

import dash
from dash import reference
from dash.schedule import BwdScheduleView, dq_accumulation_orders
from conftest import requires_hopper
from gpu_helpers import assert_close_fa_style, poison_allocator

pytestmark = requires_hopper

MIXES = {
    "tiny": ([0, 1, 17, 0, 128, 1, 129, 5], None),
    "mixed": ([300, 1, 4097, 0, 64, 1000, 17], None),
    "unequal": ([200, 0, 1, 777, 128], [500, 3, 0, 640, 1]),
}


def make_varlen_inputs(lengths_q, lengths_k, heads, heads_kv, head_dim, dtype, causal, seed=0):
    lengths_k = lengths_q if lengths_k is None else lengths_k
    gen = torch.Generator(device="cuda").manual_seed(seed)
    total_q, total_k = sum(lengths_q), sum(lengths_k)
    q = torch.randn(total_q, heads, head_dim, generator=gen, device="cuda", dtype=dtype)
    k = torch.randn(total_k, heads_kv, head_dim, generator=gen, device="cuda", dtype=dtype)
    v = torch.randn(total_k, heads_kv, head_dim, generator=gen, device="cuda", dtype=dtype)
    dout = torch.randn(total_q, heads, head_dim, generator=gen, device="cuda", dtype=dtype)
    cu_q = torch.tensor([0, *itertools.accumulate(lengths_q)], dtype=torch.int32, device="cuda")
    cu_k = torch.tensor([0, *itertools.accumulate(lengths_k)], dtype=torch.int32, device="cuda")
    out, lse = reference.attention_varlen_forward(q, k, v, cu_q, cu_k, causal=causal)
    return dict(q=q, k=k, v=v, dout=dout, out=out, lse=lse, cu_q=cu_q, cu_k=cu_k, max_q=max(lengths_q),
                max_k=max(lengths_k), causal=causal)


def run_varlen_bwd(x, deterministic, **kw):
    poison_allocator(x["q"], x["k"], x["v"])
    return dash.attn_varlen_bwd(x["dout"], x["q"], x["k"], x["v"], x["out"], x["lse"], x["cu_q"], x["cu_k"],
                                x["max_q"], x["max_k"], causal=x["causal"], deterministic=deterministic, **kw)


def check_grads(x, grads, dtype, **kw):
    args = (x["dout"], x["q"], x["k"], x["v"], x["cu_q"], x["cu_k"])
    ref = reference.attention_varlen_backward(*args, causal=x["causal"], **kw)
    pt = reference.attention_varlen_backward(*args, causal=x["causal"], compute_dtype=dtype, **kw)
    for name, ours, r, p in zip(("dq", "dk", "dv"), grads, ref, pt):
        assert ours.shape == r.shape
        assert_close_fa_style(name, ours, r, p, dtype)


@pytest.mark.parametrize("mix", sorted(MIXES))
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "fp16"])
@pytest.mark.parametrize("head_dim", [64, 128])
def test_backward_matches_reference(head_dim, dtype, causal, mix):
    heads, heads_kv = (4, 2) if head_dim == 128 else (3, 3)
    x = make_varlen_inputs(*MIXES[mix], heads, heads_kv, head_dim, dtype, causal, seed=head_dim + len(mix))
    deterministic = (head_dim // 64 + len(mix) + int(causal)) % 2 == 0
    check_grads(x, run_varlen_bwd(x, deterministic), dtype)


@pytest.mark.parametrize("mix", sorted(MIXES))
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("head_dim", [64, 128])
def test_forward_matches_reference(head_dim, causal, mix):
    dtype = torch.bfloat16
    x = make_varlen_inputs(*MIXES[mix], 4, 1, head_dim, dtype, causal, seed=3)
    poison_allocator(x["q"])
    out, lse = dash.attn_varlen_fwd(x["q"], x["k"], x["v"], x["cu_q"], x["cu_k"], x["max_q"], x["max_k"],
                                    causal=causal)
    ref_out, ref_lse = reference.attention_varlen_forward(x["q"], x["k"], x["v"], x["cu_q"], x["cu_k"],
                                                          causal=causal, compute_dtype=torch.float64)
    pt_out, _ = reference.attention_varlen_forward(x["q"], x["k"], x["v"], x["cu_q"], x["cu_k"], causal=causal,
                                                   compute_dtype=dtype)
    assert_close_fa_style("out", out, ref_out.double(), pt_out, dtype)
    assert lse.shape == (4, x["q"].shape[0])
    finite = torch.isfinite(ref_lse)
    assert torch.equal(torch.isfinite(lse), finite)
    assert (lse[finite].double() - ref_lse[finite].double()).abs().max() < 1e-3


@pytest.mark.parametrize("window", [None, 300], ids=["causal", "window300"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "fp16"])
def test_forward_bits_do_not_depend_on_the_other_documents(dtype, window):
    """hdim 64 runs short packed calls (max_seqlen_k within the limit) on its short-walk kernel
    (128-row tiles) and longer ones on the 192-row kernel. Each row visits the same KV tiles in
    the same order either way (a Q tile's extra KV tiles are wholly hidden for the rows that do
    not see them), so a document's out and LSE are the same bits whether a longer document
    shares its call or not."""
    from dash import capabilities
    if not capabilities.fwd_takes_short_walk(64, banded=True, seqlen_k=1000, dtype=dtype):
        pytest.skip("this build has no short-walk forward kernel for hdim 64")
    assert not capabilities.fwd_takes_short_walk(64, banded=True, seqlen_k=3001, dtype=dtype)
    gen = torch.Generator(device="cuda").manual_seed(11)
    docs = [[torch.randn(n, 4, 64, generator=gen, device="cuda", dtype=dtype) for _ in range(3)] for n in (1000, 3001)]
    args = dict(causal=True) if window is None else dict(causal=True, window_size=(window, 0))

    def run(parts):
        q, k, v = (torch.cat([d[i] for d in parts]) for i in range(3))
        lengths = [d[0].shape[0] for d in parts]
        cu = torch.tensor([0, *itertools.accumulate(lengths)], dtype=torch.int32, device="cuda")
        return dash.attn_varlen_fwd(q, k, v, cu, cu, max(lengths), max(lengths), **args)

    alone_out, alone_lse = run(docs[:1])
    for together in (docs, docs[::-1]):
        out, lse = run(together)
        first = 0 if together[0] is docs[0] else 3001
        assert torch.equal(out[first:first + 1000], alone_out), "out of the short document differs"
        assert torch.equal(lse[:, first:first + 1000], alone_lse), "LSE of the short document differs"


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("head_dim", [64, 96, 128])
def test_forward_rows_past_a_document_end_leave_the_next_document_alone(head_dim, causal):
    """Where the forward stores O with TMA (trait "fwd_epilogue": "staged"; fwd/epilogue.h), a warp's
    16 rows leave as one box, which would run past a packed document's end into the next document's
    rows; a warp whose rows cross the end copies its valid rows with the lanes instead. Document A
    (70 rows: its first tile's warp of rows 64-79 crosses A's end) precedes document B, which a
    causal call runs first (longest first), so a box written past A's end would land on B's rows
    after B stored them: B's out and LSE must be the bits of B alone, A's the reference's."""
    dtype = torch.bfloat16
    gen = torch.Generator(device="cuda").manual_seed(13)
    docs = [[torch.randn(n, 4, head_dim, generator=gen, device="cuda", dtype=dtype) for _ in range(3)]
            for n in (70, 1000)]

    def run(parts):
        q, k, v = (torch.cat([d[i] for d in parts]) for i in range(3))
        lengths = [d[0].shape[0] for d in parts]
        cu = torch.tensor([0, *itertools.accumulate(lengths)], dtype=torch.int32, device="cuda")
        poison_allocator(q, q[:, :, 0].t().float())
        return dash.attn_varlen_fwd(q, k, v, cu, cu, max(lengths), max(lengths), causal=causal), (q, k, v, cu)

    (alone_out, alone_lse), _ = run(docs[1:])
    (out, lse), (q, k, v, cu) = run(docs)
    assert torch.equal(out[70:], alone_out), "out of the document after the crossing warp differs"
    assert torch.equal(lse[:, 70:], alone_lse), "LSE of the document after the crossing warp differs"
    ref_out, _ = reference.attention_varlen_forward(q, k, v, cu, cu, causal=causal, compute_dtype=torch.float64)
    pt_out, _ = reference.attention_varlen_forward(q, k, v, cu, cu, causal=causal, compute_dtype=dtype)
    assert_close_fa_style("out", out[:70], ref_out[:70].double(), pt_out[:70], dtype)


def test_seqused_leaves_unused_rows_zero():
    x = make_varlen_inputs([300, 129, 64], [256, 200, 64], 4, 2, 128, torch.bfloat16, True, seed=5)
    used_q = torch.tensor([250, 1, 0], dtype=torch.int32, device="cuda")
    used_k = torch.tensor([256, 100, 10], dtype=torch.int32, device="cuda")
    out, lse = dash.attn_varlen_fwd(x["q"], x["k"], x["v"], x["cu_q"], x["cu_k"], x["max_q"], x["max_k"],
                                    seqused_q=used_q, seqused_k=used_k, causal=True)
    kw = dict(seqused_q=used_q.tolist(), seqused_k=used_k.tolist())
    ref_out, ref_lse = reference.attention_varlen_forward(x["q"], x["k"], x["v"], x["cu_q"], x["cu_k"], causal=True,
                                                          **kw)
    assert (out.float() - ref_out.float()).abs().max() < 0.05
    assert out[250:300].abs().max() == 0 and torch.isinf(lse[:, 250:300]).all()
    x["out"], x["lse"] = ref_out, ref_lse
    grads = run_varlen_bwd(x, True, seqused_q=used_q, seqused_k=used_k)
    check_grads(x, grads, torch.bfloat16, **kw)


BITWISE = [  # lengths q, lengths k, heads, heads_kv, head_dim, causal, schedule -> planned: many tiles, 16k tokens
    ([4096, 17, 1, 2048, 6000, 129, 0, 4093], None, 16, 4, 128, True, "auto", "diagonal"),
    ([4096, 17, 1, 2048, 6000, 129, 0, 4093], None, 16, 4, 128, True, "descending", "descending"),
    ([3000, 1, 700, 5000, 129, 2100], [2000, 5, 1500, 5000, 0, 2500], 8, 2, 64, True, "auto", "diagonal"),
    ([1000, 3000, 2048, 512, 9000, 823], None, 8, 8, 64, False, "auto", "ascending"),
]


@pytest.mark.parametrize("parts", [1, 4])
@pytest.mark.parametrize("lengths_q,lengths_k,heads,heads_kv,head_dim,causal,schedule,planned", BITWISE)
def test_bitwise_reproducible_and_order_matches_model(monkeypatch, lengths_q, lengths_k, heads, heads_kv, head_dim,
                                                      causal, schedule, planned, parts):
    """parts: query-head groups split over that many tasks (DASH_KV_PARTS), where the group allows."""
    if (heads // heads_kv) % parts != 0:
        pytest.skip(f"group {heads // heads_kv} does not split in {parts}")
    monkeypatch.setenv("DASH_KV_PARTS", str(parts))
    x = make_varlen_inputs(lengths_q, lengths_k, heads, heads_kv, head_dim, torch.bfloat16, causal, seed=9)
    first = run_varlen_bwd(x, True, schedule=schedule)
    for i in range(49):
        again = run_varlen_bwd(x, True, schedule=schedule)
        for name, a, b in zip(("dq", "dk", "dv"), first, again):
            assert torch.equal(a, b), f"{name} differs from the first run at repeat {i + 1}"
    plan = dash.attn_varlen_bwd_plan(x["q"], x["k"], x["cu_q"], x["cu_k"], x["max_q"], x["max_k"], causal, True,
                                     schedule)
    assert plan["schedule"] == planned and "variable-length" in plan["reason"] and plan["kv_parts"] == parts
    block_m, block_n = dash.bwd_tile_shape(head_dim)
    cu_q, cu_k = x["cu_q"].tolist(), x["cu_k"].tolist()
    view = BwdScheduleView.for_varlen(heads, heads_kv, cu_q, cu_k, block_m, block_n, causal, plan["schedule"],
                                      plan["grid"], parts=plan["kv_parts"])
    trace, count = dash.varlen_trace_buffers(heads, cu_q, x["max_q"], x["max_k"], head_dim, "cuda")
    traced = run_varlen_bwd(x, True, schedule=schedule, dq_trace=trace, dq_trace_count=count)
    assert all(torch.equal(a, b) for a, b in zip(first, traced))
    geo = view.geometry()
    trace, count = trace.cpu(), count.cpu()
    orders = dq_accumulation_orders(view)
    for (b, h, m), want in orders.items():
        t = geo.dq_tile(geo.seq(b), h, m)
        assert trace[t, : count[t]].tolist() == want, f"sequence {b} head {h} Q tile {m}"
    assert int(count.sum()) == sum(len(w) for w in orders.values())


@pytest.mark.parametrize("schedule", ["diagonal", "descending", "ascending"])
@pytest.mark.parametrize("mix", sorted(MIXES))
def test_causal_schedules_match_reference(mix, schedule):
    """Every order the counter deals for causal packed batches, deterministic and not."""
    x = make_varlen_inputs(*MIXES[mix], 4, 2, 128, torch.bfloat16, True, seed=21)
    for deterministic in (True, False):
        check_grads(x, run_varlen_bwd(x, deterministic, schedule=schedule), torch.bfloat16)


@pytest.mark.parametrize("causal", [False, True])
def test_finishes_beside_a_long_kernel(monkeypatch, causal):
    monkeypatch.setenv("DASH_WATCHDOG_MS", "20000")
    x = make_varlen_inputs([4096, 33, 2000, 1, 7000, 3000], None, 16, 4, 128, torch.bfloat16, causal, seed=12)
    undisturbed = run_varlen_bwd(x, True)
    torch.cuda.synchronize()
    busy = torch.cuda.Stream()
    with torch.cuda.stream(busy):
        torch.ops.dash._occupy_sms(40, 300)
    start = time.monotonic()
    disturbed = run_varlen_bwd(x, True)
    torch.cuda.synchronize()
    assert time.monotonic() - start < 20
    assert all(torch.equal(a, b) for a, b in zip(undisturbed, disturbed))


def test_empty_batches():
    x = make_varlen_inputs([0, 0], [5, 0], 2, 2, 64, torch.bfloat16, False)
    out, lse = dash.attn_varlen_fwd(x["q"], x["k"], x["v"], x["cu_q"], x["cu_k"], 0, 5)
    assert out.shape == (0, 2, 64) and lse.shape == (2, 0)
    x = make_varlen_inputs([3, 4], [0, 0], 2, 1, 64, torch.bfloat16, True)
    out, lse = dash.attn_varlen_fwd(x["q"], x["k"], x["v"], x["cu_q"], x["cu_k"], 4, 0, causal=True)
    assert out.abs().max() == 0 and torch.isinf(lse).all()


BAD_CALL = """
import torch, dash
q = torch.randn(10, 2, 64, device="cuda", dtype=torch.bfloat16)
cu_q = torch.tensor({cu_q}, dtype=torch.int32, device="cuda")
cu_k = torch.tensor([0, 4, 10], dtype=torch.int32, device="cuda")
out, lse = dash.attn_varlen_fwd(q, q, q, cu_q, cu_k, {max_q}, 6)
torch.cuda.synchronize()
print("NO ERROR")
"""


@pytest.mark.parametrize("cu_q,max_q,message", [
    ([0, 7, 3], 8, "invalid cu_seqlens"),                                   # decreasing, wrong end
    ([1, 4, 10], 8, "invalid cu_seqlens"),                                  # does not start at 0
    ([0, 4, 10], 5, "more than max_seqlen_q"),                              # max_seqlen too small
])
def test_invalid_cu_seqlens_is_a_device_error(cu_q, max_q, message):
    """Checked on the device (no host sync): the prepare kernel prints what is wrong and
    traps, so the call fails with a CUDA error (run in a subprocess: the context is lost)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    result = subprocess.run([sys.executable, "-c", BAD_CALL.format(cu_q=cu_q, max_q=max_q)], capture_output=True,
                            text=True, env=env, timeout=120)
    assert "NO ERROR" not in result.stdout and result.returncode != 0
    assert message in result.stdout + result.stderr
