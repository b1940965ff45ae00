"""CPU: the example scripts' logic, without a GPU.

examples/train_gpt.py --packed: the documents of a packed row (lengths, cu_seqlens, positions,
ignored targets), the SDPA document-mask path against attention run per document, dash's
flash_attn_varlen_func path through stand-in kernels against it, and the packed GPT against
each document run alone.

examples/train_hf_llama.py: the documented CPU smoke commands end to end in a subprocess
(sdpa only; dash is reported as skipped: no GPU), the dash path in-process through the
stand-in kernels (two runs bitwise identical, varlen ops with the deterministic backward,
losses next to sdpa's), and what transformers' masking builds for sdpa on packed rows."""
import json
import math
import os
import pathlib
import subprocess
import sys

import pytest
import torch

from conftest import requires_library
from op_test_doubles import reference_kernels

ROOT = pathlib.Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
if str(EXAMPLES) not in sys.path:
    sys.path.insert(0, str(EXAMPLES))

import train_gpt as tg  # noqa: E402


# --------------------------------------------------------------------------------------
# train_gpt.py --packed

def _cfg(**overrides):
    base = dict(vocab_size=64, seqlen=96, layers=1, d_model=64, head_dim=32, batch_size=3, steps=3, successors=4,
                copy_len=8, copy_every=32, packed=True, min_doc_len=8)
    base.update(overrides)
    cfg = tg.GPTConfig(**base)
    cfg.validate()
    return cfg


def test_sample_document_lengths_fill_the_row_within_bounds():
    gen = torch.Generator().manual_seed(0)
    for total, low, high in ((2048, 64, 2048), (100, 7, 30), (5, 8, 16), (64, 64, 64)):
        for _ in range(20):
            lengths = tg.sample_document_lengths(total, low, high, gen)
            assert sum(lengths) == total
            assert all(1 <= n <= high for n in lengths)
            assert all(n >= low for n in lengths[:-1]), "only the last document may be cut short"
    a = tg.sample_document_lengths(4096, 64, 4096, torch.Generator().manual_seed(3))
    b = tg.sample_document_lengths(4096, 64, 4096, torch.Generator().manual_seed(3))
    assert a == b
    many = [n for _ in range(200) for n in tg.sample_document_lengths(4096, 64, 4096, gen)[:-1]]
    # log-uniform: about half the documents below the geometric mean sqrt(64 * 4096) = 512
    below = sum(n < 512 for n in many) / len(many)
    assert 0.35 < below < 0.65, below
    with pytest.raises(ValueError):
        tg.sample_document_lengths(10, 0, 5, gen)


def test_documents_from_lengths():
    docs = tg.Documents.from_lengths([[3, 5], [1, 6, 1]])
    assert docs.cu_seqlens.dtype == torch.int32
    assert docs.cu_seqlens.tolist() == [0, 3, 8, 9, 15, 16]
    assert docs.max_seqlen == 6 and docs.count == 5
    assert docs.positions.tolist() == [[0, 1, 2, 0, 1, 2, 3, 4], [0, 0, 1, 2, 3, 4, 5, 0]]
    assert docs.doc_ids.tolist() == [[0, 0, 0, 1, 1, 1, 1, 1], [2, 3, 3, 3, 3, 3, 3, 4]]
    mask = docs.attention_mask()
    assert mask.shape == (2, 1, 8, 8) and mask.dtype == torch.bool
    for row, lengths in enumerate(docs.lengths):
        want = torch.block_diag(*[torch.ones(n, n, dtype=torch.bool).tril() for n in lengths])
        assert torch.equal(mask[row, 0], want)
    with pytest.raises(ValueError):
        tg.Documents.from_lengths([[3, 5], [4, 3]])  # rows of different lengths


def test_packed_batch_keeps_the_tokens_and_ignores_cross_document_targets():
    cfg = _cfg()
    data = tg.SyntheticLanguage(cfg)
    inputs, targets = data.batch(1)
    p_inputs, p_targets, docs = data.packed_batch(1)
    assert torch.equal(p_inputs, inputs)
    ends = docs.cu_seqlens[1:].long() - 1
    ignored = (p_targets.view(-1) == tg.IGNORE_INDEX).nonzero().view(-1)
    assert torch.equal(ignored, ends)
    keep = p_targets != tg.IGNORE_INDEX
    assert torch.equal(p_targets[keep], targets[keep])
    assert all(sum(row) == cfg.seqlen for row in docs.lengths)
    assert all(n >= cfg.min_doc_len for row in docs.lengths for n in row[:-1])
    again = tg.SyntheticLanguage(cfg).packed_batch(1)
    assert torch.equal(again[1], p_targets) and again[2].lengths == docs.lengths
    assert data.packed_batch(2)[2].lengths != docs.lengths  # (seeded per step: these differ)


def _per_document_reference(q, k, v, docs):
    out = torch.empty_like(q)
    for row, lengths in enumerate(docs.lengths):
        start = 0
        for n in lengths:
            part = slice(start, start + n)
            o = torch.nn.functional.scaled_dot_product_attention(
                *(t[row:row + 1, part].transpose(1, 2).float() for t in (q, k, v)), is_causal=True)
            out[row:row + 1, part] = o.transpose(1, 2).to(q.dtype)
            start += n
    return out


def test_sdpa_document_mask_matches_attention_per_document():
    docs = tg.Documents.from_lengths([[5, 11, 16], [32], [1, 30, 1]])
    gen = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(3, 32, 2, 16, generator=gen) for _ in range(3))
    attention = tg.make_attention("sdpa", sdpa_backend="math")
    out = attention(q, k, v, docs)
    torch.testing.assert_close(out, _per_document_reference(q, k, v, docs), atol=1e-5, rtol=1e-5)
    # without documents: the fixed-length (three-argument) call is unchanged
    full = torch.nn.functional.scaled_dot_product_attention(*(t.transpose(1, 2) for t in (q, k, v)), is_causal=True)
    torch.testing.assert_close(attention(q, k, v), full.transpose(1, 2))


@requires_library
@pytest.mark.parametrize("deterministic", [False, True])
def test_dash_varlen_path_matches_the_document_mask(deterministic):
    """dash's packed path (flash_attn_varlen_func on the flattened batch) through the CPU
    stand-in kernels: the same values and gradients as SDPA with the document mask."""
    docs = tg.Documents.from_lengths([[7, 9, 16], [20, 12]])
    gen = torch.Generator().manual_seed(1)
    base = [torch.randn(2, 32, 4, 64, generator=gen).to(torch.bfloat16) for _ in range(3)]
    ours = [t.clone().requires_grad_() for t in base]
    theirs = [t.float().clone().requires_grad_() for t in base]
    with reference_kernels() as calls:
        out = tg.make_attention("dash", deterministic=deterministic)(*ours, docs)
        out.float().square().sum().backward()
    ref = tg.make_attention("sdpa", sdpa_backend="math")(*theirs, docs)
    ref.square().sum().backward()
    assert [c.op for c in calls] == ["attn_varlen_fwd", "attn_varlen_bwd"]
    assert calls[1].deterministic is deterministic and calls[0].causal
    assert calls[0].shapes[0] == (64, 4, 64)  # (batch * seqlen, heads, head_dim)
    torch.testing.assert_close(out.float(), ref, atol=2e-2, rtol=2e-2)
    for a, b in zip(ours, theirs):
        torch.testing.assert_close(a.grad.float(), b.grad, atol=5e-2, rtol=5e-2)


def test_packed_gpt_equals_each_document_alone():
    """Document mask + RoPE positions restarting at 0: the logits of a document inside a
    packed row are those of the document run alone."""
    cfg = _cfg(packed=False, seqlen=48, d_model=64, head_dim=32, layers=2)
    model = tg.build_model(cfg, "sdpa", device="cpu", sdpa_backend="math").eval()
    docs = tg.Documents.from_lengths([[10, 30, 8], [48]])
    tokens = torch.randint(cfg.vocab_size, (2, cfg.seqlen), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        packed = model(tokens, documents=docs)
        for row, lengths in enumerate(docs.lengths):
            start = 0
            for n in lengths:
                alone = model(tokens[row:row + 1, start:start + n])
                torch.testing.assert_close(packed[row:row + 1, start:start + n], alone, atol=1e-4, rtol=1e-4)
                start += n


def test_train_packed_on_cpu():
    cfg = _cfg(steps=2, seqlen=64, batch_size=2)
    result = tg.train(cfg, "sdpa", deterministic=True, device="cpu", log=lambda *_: None, eval_every=0)
    assert len(result["loss"]) == 2 and all(math.isfinite(x) for x in result["loss"])
    assert len(result["documents_per_step"]) == 2 and min(result["documents_per_step"]) >= 2
    assert result["label"].endswith(", packed")
    unpacked = tg.train(_cfg(steps=2, seqlen=64, batch_size=2, packed=False), "sdpa", device="cpu",
                        log=lambda *_: None, eval_every=0)
    assert unpacked["documents_per_step"] is None and "packed" not in unpacked["label"]


def test_train_gpt_refuses_flash_for_packed_rows():
    with pytest.raises(SystemExit, match="document mask"):
        tg.main(["--device", "cpu", "--attn", "sdpa", "--sdpa-backend", "flash", "--packed", "--steps", "1"])


# --------------------------------------------------------------------------------------
# train_hf_llama.py

import train_hf_llama as hf  # noqa: E402  (imports transformers only when used)

try:
    import transformers  # noqa: F401
    HAVE_TRANSFORMERS = True
except ImportError:
    HAVE_TRANSFORMERS = False
requires_transformers = pytest.mark.skipif(not HAVE_TRANSFORMERS, reason="transformers is not installed")


def _run_script(tmp_path, *extra):
    out = tmp_path / "result.json"
    env = {k: v for k, v in os.environ.items() if k != "OUT"}  # --out is given; $OUT would not be used
    proc = subprocess.run([sys.executable, str(EXAMPLES / "train_hf_llama.py"), "--device", "cpu", "--tiny",
                           "--out", str(out), *extra], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout, json.loads(out.read_text())


@requires_transformers
def test_hf_smoke_padded_sdpa(tmp_path):
    """The documented CPU smoke command."""
    stdout, record = _run_script(tmp_path, "--impls", "sdpa", "--data", "padded")
    run = record["runs"]["sdpa[default]"]
    assert len(run["loss"]) == 3 and all(math.isfinite(x) for x in run["loss"])
    assert abs(run["loss"][0] - math.log(1024)) < 1.0  # random init: about uniform over the vocabulary
    assert run["tokens_per_s"] > 0 and run["sdpa_backend_ran"]
    assert record["masks"]["sdpa, use_cache=False"] == dict(kind="4-D bool", shape=run_shape(record),
                                                             equals_wanted=True)
    assert record["exit_status"] == 0 and record["skipped"] == {}
    assert (tmp_path / "result.json").exists()
    assert "=== summary ===" in stdout and "loss per step" in stdout


def run_shape(record):
    rows, length = record["data"]["padded_shape_per_step"][0]
    return [rows, 1, length, length]


@requires_transformers
def test_hf_smoke_packed_reports_dash_skipped(tmp_path):
    """Default implementations on the CPU: dash says it is skipped (no GPU), sdpa on the
    packed row and on the same documents unpacked give the same loss."""
    stdout, record = _run_script(tmp_path, "--data", "packed", "--steps", "2")
    assert "dash skipped: no GPU" in stdout
    assert record["skipped"]["dash"].startswith("no GPU")
    packed, unpacked = record["runs"]["sdpa[default]"], record["runs"]["sdpa_unpacked[default]"]
    assert abs(packed["loss"][0] - unpacked["loss"][0]) < 2e-3
    assert record["masks"]["sdpa, use_cache=False"]["equals_wanted"] is True
    assert record["checks"]["tracking"]["noise_floor"] < 2e-2
    assert "bitwise" not in record["checks"]


@requires_transformers
def test_transformers_sdpa_sees_documents_only_without_a_cache():
    """transformers 5.x: from position_ids restarting at 0 sdpa gets a document mask, but
    only when no cache exists (use_cache=True makes one, and then no mask at all): the
    reason the script passes use_cache=False."""
    args = hf.parse_args(["--device", "cpu", "--tiny", "--data", "packed", "--steps", "1"])
    batch = hf.build_batches(args)["packed"][0]
    masks = hf.describe_masks(hf.llama_config(args), batch, torch.device("cpu"), ("sdpa",))
    assert masks["sdpa, use_cache=False"]["kind"] == "4-D bool"
    assert masks["sdpa, use_cache=False"]["equals_wanted"] is True
    assert masks["sdpa, use_cache=True"]["kind"] == "none"
    assert masks["sdpa, use_cache=True"]["equals_wanted"] is False
    labels, positions = batch.kwargs["labels"][0], batch.kwargs["position_ids"][0]
    assert torch.equal(labels == -100, positions == 0)  # DataCollatorWithFlattening: no label on document starts


@requires_library
@requires_transformers
@pytest.mark.parametrize("data,extra", [("padded", ()),
                                        ("packed", ("--packed-via", "cu_seq_lens", "--precision", "bf16"))])
def test_hf_dash_path_through_stand_in_kernels(tmp_path, data, extra):
    args = hf.parse_args(["--device", "cpu", "--tiny", "--data", data, "--steps", "2", "--impls", "dash,sdpa",
                          "--out", str(tmp_path / "r.json"), *extra])
    with reference_kernels() as calls:
        record, status = hf.run_experiment(args, allow_cpu_dash=True, log=lambda *_: None)
    assert status == 0, record["checks"]
    assert {c.op for c in calls} == {"attn_varlen_fwd", "attn_varlen_bwd"}
    bitwise = record["checks"]["bitwise"]
    assert bitwise["passed"] and bitwise["identical_weights"] and bitwise["runs"] == ["dash#1", "dash#2"]
    assert record["runs"]["dash#1"]["dash_ops_step0"] == {"dash::attn_varlen_fwd deterministic=True": 2,
                                                          "dash::attn_varlen_bwd deterministic=True": 2}
    assert record["checks"]["tracking"]["passed"] and record["checks"]["tracking"]["max_abs"] < 5e-3
    assert record["dash_registration"]["name"] == "dash"
    hf.write_outputs(record, args, log=lambda *_: None)
    assert json.loads((tmp_path / "r.json").read_text())["checks"]["bitwise"]["passed"]


@requires_transformers
def test_hf_bitwise_failure_sets_the_exit_status():
    args = hf.parse_args(["--device", "cpu", "--tiny"])
    run = dict(impl="dash", loss=[1.0, 2.0], grad_norm=[1.0, 1.0], weights_sha256="a", final_loss=2.0,
               tokens_per_s=1.0, mean_step_ms=1.0)
    record = dict(runs={"dash#1": dict(run, name="dash#1"),
                        "dash#2": dict(run, name="dash#2", loss=[1.0, 2.0000001], weights_sha256="b")},
                  skipped={}, checks={})
    assert hf.finish(record, args, log=lambda *_: None) == 1
    assert record["checks"]["bitwise"]["first_differing_step"] == 1


def _cp_body(rank, world, results):
    """One rank of examples/train_gpt_cp.py's training on the CPU (gloo, the CPU stand-in
    kernels): both CP modes, Ulysses twice, ring again with an sm_margin and with all_reduce's
    gradient mean in place of the rank-order one."""
    import train_gpt_cp as cp  # noqa: PLC0415
    cfg = _cfg(packed=False, seqlen=64, head_dim=64, d_model=128, batch_size=2, steps=2)
    with reference_kernels(backward_from_lse=True):
        variants = (("ulysses", "ulysses", 0, None), ("ulysses_again", "ulysses", 0, None), ("ring", "ring", 0, None),
                    ("ring_margin", "ring", 4, None), ("ring_all_reduce", "ring", 0, False))
        runs = {name: cp.train_cp(cfg, mode, True, "cpu", log=lambda *_: None, sm_margin=margin,
                                  ordered_grads=ordered) for name, mode, margin, ordered in variants}
    if rank == 0:
        results.put({name: (r["loss"], r["weights_sha256"]) for name, r in runs.items()})


@requires_library
def test_train_gpt_cp_on_cpu():
    """examples/train_gpt_cp.py with 2 gloo ranks on the CPU: finite losses, a second
    deterministic Ulysses run with the same losses and weights bit for bit, ring's first
    loss (before any update: only attention's rounding differs) close to Ulysses', and a
    second ring run (its transfers overlapped with the blocks, an sm_margin given) with the
    first one's bits."""
    import torch.multiprocessing as mp  # noqa: PLC0415
    from gloo_helpers import run_on_gloo  # noqa: PLC0415
    results = mp.get_context("spawn").SimpleQueue()
    run_on_gloo(_cp_body, 2, results)
    got = results.get()
    assert all(math.isfinite(x) for loss, _ in got.values() for x in loss)
    assert got["ulysses"] == got["ulysses_again"]
    assert abs(got["ring"][0][0] - got["ulysses"][0][0]) < 1e-2
    assert got["ring"] == got["ring_margin"]
    # Two ranks: the rank-order sum and gloo's all_reduce add the same two numbers.
    assert got["ring"] == got["ring_all_reduce"]
