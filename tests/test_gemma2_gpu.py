"""GPU: a Gemma-2-style HF transformers model trained through dash (issue 12's Gemma-2 client):
Gemma2ForCausalLM from a config built here (random init, no download), 2 layers, the first
with a sliding window and the second global, attention logits soft-capped at 50, GQA, head
dim 128, under autocast bf16. Its forward and backward match transformers' eager attention
(the implementation that applies Gemma-2's softcap and window itself); dash receives the
window (sliding_window - 1, sliding_window - 1) on the sliding layer and none on the global one,
softcap 50 on both; two deterministic 8-step trainings give bitwise-identical losses and
weights."""
import copy

import pytest
import torch

from conftest import requires_hopper

transformers = pytest.importorskip("transformers", reason="transformers is not installed")
pytestmark = requires_hopper

from dash import flash_attn_interface as fai  # noqa: E402
from dash.integrations import transformers as dash_hf  # noqa: E402

SEQLEN, WINDOW, SOFTCAP = 320, 96, 50.0


def _gemma2(attn):
    cfg = transformers.Gemma2Config(
        vocab_size=512, hidden_size=512, intermediate_size=1024, num_hidden_layers=2, num_attention_heads=8,
        num_key_value_heads=2, head_dim=128, sliding_window=WINDOW, attn_logit_softcapping=SOFTCAP,
        final_logit_softcapping=30.0, query_pre_attn_scalar=128, max_position_embeddings=1024,
        layer_types=["sliding_attention", "full_attention"], attention_dropout=0.0, use_cache=False)
    torch.manual_seed(0)
    return transformers.AutoModelForCausalLM.from_config(cfg, attn_implementation=attn).cuda()


def _batch(seed=0):
    gen = torch.Generator(device="cuda").manual_seed(seed)
    ids = torch.randint(0, 512, (2, SEQLEN), device="cuda", generator=gen)
    return dict(input_ids=ids, labels=ids)


@pytest.fixture(scope="module")
def models():
    dash_hf.register()
    eager = _gemma2("eager")
    dash_model = copy.deepcopy(eager)
    dash_model.set_attn_implementation("dash")
    return eager, dash_model


def _loss_and_grads(model, batch):
    model.zero_grad(set_to_none=True)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = model(**batch).loss
    loss.backward()
    return loss.detach(), {n: p.grad.detach().clone() for n, p in model.named_parameters() if p.grad is not None}


def test_matches_eager_and_receives_window_and_softcap(models, monkeypatch):
    eager, dash_model = models
    seen = []
    original = fai.flash_attn_func

    def spy(*args, **kwargs):
        seen.append((kwargs.get("window_size"), kwargs.get("softcap"), kwargs.get("causal")))
        return original(*args, **kwargs)

    monkeypatch.setattr(fai, "flash_attn_func", spy)
    batch = _batch()
    loss_e, grads_e = _loss_and_grads(eager, batch)
    loss_d, grads_d = _loss_and_grads(dash_model, batch)
    assert seen == [((WINDOW - 1, WINDOW - 1), SOFTCAP, True), ((-1, -1), SOFTCAP, True)]
    assert abs(loss_d.item() - loss_e.item()) < 1e-2, (loss_d.item(), loss_e.item())
    assert grads_d.keys() == grads_e.keys()
    for name, g in grads_e.items():
        cos = torch.nn.functional.cosine_similarity(grads_d[name].flatten().float(), g.flatten().float(), dim=0)
        assert cos > 0.99, f"{name}: cosine similarity of dash's and eager's gradient {cos.item():.4f}"


def test_window_and_softcap_change_the_result(models):
    """The same weights without the cap and the window give a visibly different loss, so the
    agreement above is not vacuous."""
    _, dash_model = models
    plain = copy.deepcopy(dash_model)
    for layer in plain.model.layers:
        layer.self_attn.sliding_window = None
        layer.self_attn.attn_logit_softcapping = None
    batch = _batch(1)
    loss_capped, _ = _loss_and_grads(dash_model, batch)
    loss_plain, _ = _loss_and_grads(plain, batch)
    assert abs(loss_capped.item() - loss_plain.item()) > 1e-3


def _train(model, steps=8):
    model = copy.deepcopy(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    batch = _batch(100)  # one batch, learnt step by step: the loss must fall
    losses = []
    for step in range(steps):
        loss, _ = _loss_and_grads(model, batch)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())
    return losses, [p.detach().clone() for p in model.parameters()]


def test_deterministic_training_is_bitwise_reproducible(models):
    _, dash_model = models
    torch.use_deterministic_algorithms(True, warn_only=True)
    try:
        losses_a, weights_a = _train(dash_model)
        losses_b, weights_b = _train(dash_model)
    finally:
        torch.use_deterministic_algorithms(False)
    assert losses_a == losses_b
    assert all(torch.equal(a, b) for a, b in zip(weights_a, weights_b))
    assert losses_a[-1] < losses_a[0]
