"""CPU: dash as a HF transformers attention implementation (dash.integrations.transformers),
end to end through stand-in kernels: a Llama-architecture model with GQA built with
attn_implementation="dash" matches transformers' own sdpa implementation on unpadded,
right-padded, left-padded and packed (position_ids) batches, forward and backward; a
Mistral-architecture model with a sliding window matches sdpa too, dash receiving
transformers' flash-attention window (sliding_window - 1, sliding_window - 1) when the keys
are longer than the window and no window otherwise; the deterministic flag follows
torch.use_deterministic_algorithms / FLASH_ATTENTION_DETERMINISTIC; unsupported configs raise."""
import pytest
import torch

from conftest import requires_library
from op_test_doubles import reference_kernels

transformers = pytest.importorskip("transformers", reason="transformers is not installed")
pytestmark = requires_library

from dash.integrations import transformers as dash_hf  # noqa: E402


def _llama(attn, seed=0, **overrides):
    cfg = transformers.LlamaConfig(vocab_size=97, hidden_size=256, intermediate_size=512, num_hidden_layers=2,
                                   num_attention_heads=4, num_key_value_heads=2, head_dim=64,
                                   max_position_embeddings=256, **overrides)
    torch.manual_seed(seed)
    model = transformers.AutoModelForCausalLM.from_config(cfg, attn_implementation=attn, dtype=torch.float32)
    return model.to(torch.bfloat16)


@pytest.fixture(scope="module")
def registered():
    return dash_hf.register()


def _loss_and_grads(model, **batch):
    model.zero_grad()
    out = model(**batch)
    logits = out.logits.float()
    mask = batch.get("attention_mask")
    weight = mask[..., None].float() if mask is not None else torch.ones_like(logits[..., :1])
    loss = (logits.square() * weight).mean()
    loss.backward()
    return logits, {n: p.grad.float().clone() for n, p in model.named_parameters() if p.grad is not None}


def _compare(name, a, b, mask=None):
    if mask is not None:
        a, b = a[mask.bool()], b[mask.bool()]
    err = (a - b).abs().max().item()
    assert err <= 0.05 * max(b.abs().max().item(), 1e-3) + 2e-2, f"{name}: max error {err}"


@pytest.mark.parametrize("padding", ["none", "right", "left"])
def test_llama_matches_sdpa(registered, padding):
    ids = torch.randint(0, 97, (3, 40), generator=torch.Generator().manual_seed(1))
    mask = torch.ones_like(ids)
    if padding == "right":
        mask[1, 25:] = 0
        mask[2, 7:] = 0
    elif padding == "left":
        mask[1, :15] = 0
        mask[2, :33] = 0
    batch = dict(input_ids=ids, attention_mask=mask if padding != "none" else None)
    ours = _llama(registered)
    theirs = _llama("sdpa")
    with reference_kernels() as calls:
        logits, grads = _loss_and_grads(ours, **batch)
    ref_logits, ref_grads = _loss_and_grads(theirs, **batch)
    expected = ["attn_fwd", "attn_bwd"] if padding == "none" else ["attn_varlen_fwd", "attn_varlen_bwd"]
    assert sorted({c.op for c in calls}) == sorted(expected)
    _compare("logits", logits, ref_logits, mask if padding != "none" else None)
    for name in ("model.layers.0.self_attn.q_proj.weight", "model.layers.1.self_attn.k_proj.weight"):
        _compare(name, grads[name], ref_grads[name])


def test_packed_position_ids_run_as_varlen(registered):
    """Three documents in one row, told apart by position_ids restarting at 0: the same as
    running each document alone."""
    lengths = [11, 20, 9]
    ids = torch.randint(0, 97, (1, sum(lengths)), generator=torch.Generator().manual_seed(2))
    position_ids = torch.cat([torch.arange(n) for n in lengths])[None]
    model = _llama(registered)
    with reference_kernels() as calls:
        packed = model(input_ids=ids, position_ids=position_ids).logits.float()
        alone = [model(input_ids=part).logits.float() for part in ids.split(lengths, dim=1)]
    assert "attn_varlen_fwd" in {c.op for c in calls}
    _compare("packed vs alone", packed, torch.cat(alone, dim=1))


def test_deterministic_flag_reaches_the_backward(registered, monkeypatch):
    ids = torch.randint(0, 97, (2, 16))
    model = _llama(registered)
    for env, flag, want in (("0", False, False), ("1", False, True), ("0", True, True)):
        monkeypatch.setenv("FLASH_ATTENTION_DETERMINISTIC", env)
        torch.use_deterministic_algorithms(flag)
        try:
            with reference_kernels() as calls:
                model(input_ids=ids).logits.float().sum().backward()
        finally:
            torch.use_deterministic_algorithms(False)
        assert {c.deterministic for c in calls if c.op == "attn_bwd"} == {want}


def test_unsupported_configs_raise(registered):
    ids = torch.randint(0, 97, (1, 8))
    model = _llama(registered, attention_dropout=0.1)
    model.train()
    with reference_kernels(), pytest.raises(NotImplementedError, match="attention dropout"):
        model(input_ids=ids)


def test_fp32_projections_under_autocast_run_in_the_autocast_dtype(registered):
    """Under autocast Llama's RoPE hands over fp32 q / k: the integration casts them to the
    autocast dtype, as transformers' flash-attention path does (dash runs bf16 / fp16)."""
    module = torch.nn.Linear(4, 4)  # fp32 weights: only autocast decides
    q = torch.randn(1, 2, 8, 64)
    with reference_kernels() as calls, torch.autocast("cpu", dtype=torch.bfloat16):
        out, _ = dash_hf.dash_attention_forward(module, q, q, q.to(torch.bfloat16), None, scaling=0.125)
    assert out.dtype == torch.bfloat16 and [c.op for c in calls] == ["attn_fwd"]
    with pytest.raises(NotImplementedError, match="float32 outside autocast"):
        dash_hf.dash_attention_forward(module, q, q, q, None, scaling=0.125)
    half = torch.nn.Linear(4, 4).to(torch.float16)  # no autocast: the module's 16-bit weights decide
    with reference_kernels():
        out, _ = dash_hf.dash_attention_forward(half, q, q, q, None, scaling=0.125)
    assert out.dtype == torch.float16


def _mistral(attn, sliding_window, seed=0):
    cfg = transformers.MistralConfig(vocab_size=97, hidden_size=256, intermediate_size=512, num_hidden_layers=2,
                                     num_attention_heads=4, num_key_value_heads=2, head_dim=64,
                                     max_position_embeddings=256, sliding_window=sliding_window)
    torch.manual_seed(seed)
    model = transformers.AutoModelForCausalLM.from_config(cfg, attn_implementation=attn, dtype=torch.float32)
    return model.to(torch.bfloat16)


@pytest.mark.parametrize("padding", ["none", "right", "left"])
def test_mistral_sliding_window_matches_sdpa(registered, padding):
    """sliding_window=8 over 40 tokens: dash gets window (7, 7) with causal (query i sees
    keys i - 7 .. i, transformers' sliding-window causal mask), on the fixed-length and the
    packed (padded batch) paths, and matches sdpa."""
    ids = torch.randint(0, 97, (3, 40), generator=torch.Generator().manual_seed(3))
    mask = torch.ones_like(ids)
    if padding == "right":
        mask[1, 25:] = 0
        mask[2, 5:] = 0
    elif padding == "left":
        mask[1, :15] = 0
        mask[2, :35] = 0
    batch = dict(input_ids=ids, attention_mask=mask if padding != "none" else None)
    ours = _mistral(registered, 8)
    theirs = _mistral("sdpa", 8)
    with reference_kernels() as calls:
        logits, grads = _loss_and_grads(ours, **batch)
    ref_logits, ref_grads = _loss_and_grads(theirs, **batch)
    assert calls and {(c.causal, c.window) for c in calls} == {(True, (7, 7))}
    expected = ["attn_fwd", "attn_bwd"] if padding == "none" else ["attn_varlen_fwd", "attn_varlen_bwd"]
    assert sorted({c.op for c in calls}) == sorted(expected)
    _compare("logits", logits, ref_logits, mask if padding != "none" else None)
    for name in ("model.layers.0.self_attn.q_proj.weight", "model.layers.1.self_attn.k_proj.weight"):
        _compare(name, grads[name], ref_grads[name])


def test_mistral_window_differs_from_full_causal(registered):
    """The window really masks: with sliding_window=4 the logits differ from a model without one."""
    ids = torch.randint(0, 97, (1, 32), generator=torch.Generator().manual_seed(4))
    with reference_kernels():
        windowed = _mistral(registered, 4)(input_ids=ids).logits.float()
        full = _mistral(registered, None)(input_ids=ids).logits.float()
    assert torch.allclose(windowed[:, :4], full[:, :4], atol=1e-2, rtol=0)
    assert not torch.allclose(windowed[:, 8:], full[:, 8:])


@pytest.mark.parametrize("sliding_window,window", [(None, (-1, -1)), (5, (4, 4)), (12, (-1, -1)), (64, (-1, -1)),
                                                   (11, (10, 10)), (1, (0, 0))])
def test_sliding_window_argument(sliding_window, window):
    """As transformers' flash-attention path: (sliding_window - 1, sliding_window - 1) when
    the keys are longer than the window, else no window."""
    module = torch.nn.Linear(4, 4).to(torch.bfloat16)
    q = torch.randn(2, 4, 12, 64, dtype=torch.bfloat16)
    k = torch.randn(2, 2, 12, 64, dtype=torch.bfloat16)
    with reference_kernels() as calls:
        out, _ = dash_hf.dash_attention_forward(module, q, k, k, None, scaling=0.125, sliding_window=sliding_window)
    assert [(c.op, c.causal, c.window) for c in calls] == [("attn_fwd", True, window)]
    from dash import reference
    ref, _ = reference.attention_forward(q.transpose(1, 2), k.transpose(1, 2), k.transpose(1, 2), 0.125, True,
                                         window_size=window)
    assert torch.equal(out, ref)


def test_softcap_and_window_reach_the_kernels():
    """Gemma-2-style local layers: attn_logit_softcapping and sliding_window together."""
    module = torch.nn.Linear(4, 4).to(torch.bfloat16)
    q = torch.randn(1, 2, 8, 64, dtype=torch.bfloat16)
    with reference_kernels() as calls:
        dash_hf.dash_attention_forward(module, q, q, q, None, scaling=0.125, softcap=30.0, sliding_window=4)
    assert [(c.op, c.window, c.softcap) for c in calls] == [("attn_fwd", (3, 3), 30.0)]
