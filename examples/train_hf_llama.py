"""Train a Llama-architecture HF transformers model (LlamaForCausalLM from a LlamaConfig built
here, random init, no downloads) with dash as its attention implementation, next to
transformers' own sdpa, on padded or packed batches; check that dash's runs are bitwise
reproducible and that dash trains the same model as sdpa.

GPU (one H200): about 3 min for --data padded (5 runs of 50 steps: dash twice, sdpa with
cuDNN first, with torch's default order and with the math backend) and 2.5-3.5 min for
--data packed (6 runs: also sdpa on the same documents unpadded into a padded batch), plus
~15 s of data and of building / hashing the 0.7B-parameter model on the CPU):

  python examples/train_hf_llama.py --data padded     # writes $OUT/train_hf_llama_padded.json (+ .png)
  python examples/train_hf_llama.py --data packed     # writes $OUT/train_hf_llama_packed.json (+ .png)

CPU smoke test of the script's logic (sdpa only: dash's kernels need a Hopper GPU, so dash
is reported as skipped when asked for), 10-30 s each:

  python examples/train_hf_llama.py --device cpu --impls sdpa --tiny --data padded
  python examples/train_hf_llama.py --device cpu --impls sdpa --tiny --data packed

Model: LlamaConfig with Llama-3-8B's layer shapes (hidden 4096, 32 query heads on 8 K/V
heads = GQA, head_dim 128, MLP 14336, rope_theta 5e5) but 2 layers and a 32k vocabulary
(--layers, --hidden-size, ...; --tiny: 2 layers, hidden 256, 4 / 2 heads of 64). It is
built once on the CPU from --seed (transformers' own init), and every run trains a copy of
those weights, so all runs start from identical parameters (sha256 recorded).

Precision (--precision autocast, the default) is what transformers' Trainer does with
bf16=True: parameters, gradients and AdamW state in fp32, the forward under
torch.autocast(bfloat16). --precision bf16 casts the model to bf16 instead (pure bf16).
Under autocast, Llama's RoPE multiplies the bf16 q / k by fp32 cos / sin, so attention gets
fp32 q and k; dash.integrations.transformers casts them to the autocast dtype, as
transformers' own flash-attention path does.

Data (--data): token streams of train_gpt.py's SyntheticLanguage (a sparse Markov chain with
copied spans, --data-vocab distinct tokens, learnable in 50 steps), cut into documents.
  padded: --batch-size rows, each one document of a length drawn uniformly from
    [--min-len-frac * --max-len, --max-len], right-padded to the longest in the batch;
    attention_mask 2-D, labels -100 on padding (what DataCollatorForLanguageModeling /
    padding collators produce).
  packed: one row of --packed-len tokens made of documents of log-uniform lengths in
    [--min-doc-len, --max-doc-len], built by transformers' DataCollatorWithFlattening:
    position_ids restarting at 0, labels -100 on every document's first token; with
    --packed-via cu_seq_lens also its cu_seq_lens_q/k and max_length_q/k kwargs. The batch
    is one row because that is what the collator makes and what transformers' flash
    attention path (and dash's integration, which mirrors it) recognises as packed.

Attention implementations (--impls), all in this process, each from the same weights on the
same batches:
  dash: attn_implementation="dash" after dash.integrations.transformers.register(); trained
    --dash-runs times (default 2) under torch.use_deterministic_algorithms(True) (which the
    integration turns into dash's deterministic backward; CUBLAS_WORKSPACE_CONFIG set, NaN
    fills of torch.empty off, as in train_gpt.py). The runs must give bitwise-identical
    losses at every step and an identical sha256 of the final weights.
  sdpa: transformers' own "sdpa" implementation, once per --sdpa-backends entry: "cudnn" =
    under torch.nn.attention.sdpa_kernel with cuDNN first in the priority order (torch falls
    back to flash / efficient / math when cuDNN refuses the inputs), "default" = no
    sdpa_kernel at all; also "flash", "efficient", "math": only that backend (an error if it
    refuses). Non-deterministic (cuDNN attention refuses to run under the global flag). The
    backend that really ran is recorded from torch's own dispatcher
    (torch._fused_sdp_choice on the exact arguments of every SDPA call of the first step)
    and from a profile of the second step (the aten / kernel names).
    Padded: transformers hands sdpa a 4-D boolean (batch, 1, q, k) causal & padding mask
    (and then repeats K/V to 32 heads: its GQA path needs no mask). Packed: transformers
    5.23 builds a 4-D document-causal mask from position_ids that restart at 0 - but only
    when no cache object exists: with the config's default use_cache=True it makes a
    DynamicCache even in training, and then returns no mask at all, so sdpa silently
    attends across documents. Every forward here passes use_cache=False; the JSON's
    "masks" section records what transformers builds for each implementation, with and
    without a cache.
  sdpa_unpacked (packed data only, default on): the same documents as a right-padded batch
    with a 2-D attention mask, through sdpa: the packed loss computed without packing.

Reported per run: the loss at every step, tokens/s (real, non-padding tokens per second over
the steps after --timing-warmup warm-up steps, each step timed between
torch.cuda.synchronize() calls), peak memory, the final weights' sha256. Checks: dash runs
bitwise identical (losses, grad norms, weights); max |loss_dash - loss_sdpa| over the steps
within max(--loss-tol, 2 x the largest difference between two sdpa runs) - the bf16 noise
between two correct implementations. With padded data the sdpa runs include the math
backend, which reduces in fp32 (torch's default for bf16 inputs): the reference the bf16
kernels scatter around, which matters at a loss spike, where any rounding difference grows
(bench/RESULTS.md item 45). Prints a summary table and the per-step losses;
writes everything to --out (a .json path; default $OUT/train_hf_llama_<data>.json when $OUT
is set, else examples/out/...) and a plot next to it.

Exit status: 0 all good (also when dash is skipped on a CPU); 1 the dash runs differ in any
bit, or a dash run failed; 2 nothing could run; 3 dash's losses are off sdpa's by more than
the tolerance.
"""
from __future__ import annotations

import argparse
import collections
import contextlib
import copy
import dataclasses
import datetime
import gc
import json
import math
import os
import pathlib
import subprocess
import sys
import time
import traceback

EXAMPLES = pathlib.Path(__file__).resolve().parent
if str(EXAMPLES) not in sys.path:
    sys.path.insert(0, str(EXAMPLES))

import train_gpt as tg  # noqa: E402  (also puts the repository root on sys.path: `import dash`)
from check_bitwise import first_difference  # noqa: E402

import torch  # noqa: E402

SDPA_BACKEND_CHOICES = ("cudnn", "default", "flash", "efficient", "math")
BACKEND_NAMES = {0: "math", 1: "flash", 2: "efficient", 3: "cudnn", 4: "overrideable", -1: "none (error)"}


# --------------------------------------------------------------------------------------
# configuration

def llama_config(args: argparse.Namespace):
    from transformers import LlamaConfig
    return LlamaConfig(
        vocab_size=args.vocab_size, hidden_size=args.hidden_size, intermediate_size=args.intermediate_size,
        num_hidden_layers=args.layers, num_attention_heads=args.heads, num_key_value_heads=args.kv_heads,
        head_dim=args.head_dim, max_position_embeddings=max(args.max_len, args.packed_len, args.max_doc_len),
        rope_theta=args.rope_theta, attention_dropout=0.0, tie_word_embeddings=False,
        # Training makes no cache; left True, transformers builds a DynamicCache in every
        # forward, and its sdpa mask then ignores packed documents (see the docstring).
        use_cache=False)


def optimizer_config(args: argparse.Namespace) -> tg.GPTConfig:
    """train_gpt's GPTConfig carries the optimiser settings that tg.make_optimizer (AdamW,
    betas 0.9 / 0.95, decay on matrices only) and tg.lr_at (warm-up, cosine) read."""
    return tg.GPTConfig(steps=args.steps, lr=args.lr, warmup_steps=args.warmup_steps,
                        weight_decay=args.weight_decay, grad_clip=args.grad_clip, seed=args.seed)


# --------------------------------------------------------------------------------------
# data

@dataclasses.dataclass
class Batch:
    kwargs: dict  # the model's keyword arguments (CPU tensors, ints)
    real_tokens: int  # non-padding tokens
    documents: list[int]  # document lengths


def synthetic_rows(args: argparse.Namespace, row_len: int, rows_per_step: int) -> tg.SyntheticLanguage:
    cfg = tg.GPTConfig(vocab_size=min(args.data_vocab, args.vocab_size), seqlen=row_len, batch_size=rows_per_step,
                       seed=args.seed, copy_len=args.copy_len, copy_every=args.copy_every)
    cfg.validate()
    # Chunks of at most the rows the run needs (the generator is sequential in time).
    return tg.SyntheticLanguage(cfg, rows_per_chunk=max(rows_per_step, min(256, rows_per_step * args.steps)))


def padded_batch(docs: list[torch.Tensor]) -> tuple[dict, int]:
    """Right padding to the longest document; attention_mask 2-D; labels -100 on padding."""
    longest = max(len(d) for d in docs)
    input_ids = torch.zeros(len(docs), longest, dtype=torch.long)  # pad id 0: never attended, never a label
    attention_mask = torch.zeros(len(docs), longest, dtype=torch.long)
    for row, doc in enumerate(docs):
        input_ids[row, :len(doc)] = doc
        attention_mask[row, :len(doc)] = 1
    labels = input_ids.masked_fill(attention_mask == 0, tg.IGNORE_INDEX)
    return dict(input_ids=input_ids, attention_mask=attention_mask, labels=labels), int(attention_mask.sum())


def build_batches(args: argparse.Namespace) -> dict[str, list[Batch]]:
    """Every step's batch, made once on the CPU before any run (all runs see the same data,
    and making it is not timed). Returns {"padded": [...]} or {"packed": [...], "unpacked":
    [...]} (unpacked: the packed documents as a padded batch)."""
    gen = torch.Generator().manual_seed(1_000_003 * args.seed + 4242)
    if args.data == "padded":
        source = synthetic_rows(args, args.max_len, args.batch_size)
        low = max(1, math.ceil(args.min_len_frac * args.max_len))
        steps = []
        for step in range(args.steps):
            rows, _ = source.batch(step)
            lengths = torch.randint(low, args.max_len + 1, (args.batch_size,), generator=gen).tolist()
            kwargs, real = padded_batch([rows[b, :n] for b, n in enumerate(lengths)])
            steps.append(Batch(kwargs, real, lengths))
        return {"padded": steps}

    from transformers import DataCollatorWithFlattening
    collator = DataCollatorWithFlattening(return_position_ids=True,
                                          return_flash_attn_kwargs=args.packed_via == "cu_seq_lens")
    source = synthetic_rows(args, args.packed_len, 1)
    packed, unpacked = [], []
    for step in range(args.steps):
        row = source.batch(step)[0][0]
        lengths = tg.sample_document_lengths(args.packed_len, args.min_doc_len, args.max_doc_len, gen)
        docs = list(row.split(lengths))
        kwargs = dict(collator([{"input_ids": d.tolist()} for d in docs], return_tensors="pt"))
        packed.append(Batch(kwargs, args.packed_len, lengths))
        kwargs_u, real = padded_batch(docs)
        unpacked.append(Batch(kwargs_u, real, lengths))
    return {"packed": packed, "unpacked": unpacked}


def to_device(kwargs: dict, device: torch.device) -> dict:
    return {k: v.to(device, non_blocking=True) if isinstance(v, torch.Tensor) else v for k, v in kwargs.items()}


# --------------------------------------------------------------------------------------
# what transformers hands each implementation

def describe_masks(config, batch: Batch, device: torch.device, impls=("sdpa", "dash")) -> dict:
    """The mask transformers' create_causal_mask builds for this batch, for sdpa and dash
    (with and without the DynamicCache that use_cache=True makes), and whether sdpa's is
    exactly the wanted causal & padding / document mask."""
    from transformers.cache_utils import DynamicCache
    from transformers.masking_utils import create_causal_mask

    kwargs = to_device(batch.kwargs, device)
    input_ids = kwargs["input_ids"]
    rows, length = input_ids.shape
    attention_mask = kwargs.get("attention_mask")
    position_ids = kwargs.get("position_ids")
    if position_ids is None:
        position_ids = torch.arange(length, device=device)[None]  # what LlamaModel makes itself
    # The wanted mask: key <= query, same document, key not padding.
    if "attention_mask" in kwargs:
        doc = torch.zeros(rows, length, dtype=torch.long, device=device)
        key_real = attention_mask.bool()
    else:
        doc = (position_ids == 0).long().cumsum(-1)
        key_real = torch.ones(rows, length, dtype=torch.bool, device=device)
    causal = torch.ones(length, length, dtype=torch.bool, device=device).tril_()
    wanted = (doc[:, :, None] == doc[:, None, :]) & causal & key_real[:, None, :]

    embeds = torch.empty(rows, length, 1, device=device)  # only its shape, dtype and device are read
    report = {}
    for impl in impls:  # "dash" only once registered (else transformers makes no mask for it at all)
        cfg = copy.deepcopy(config)
        cfg._attn_implementation = impl
        for cache in (False, True):
            key = f"{impl}, use_cache={cache}"
            try:
                mask = create_causal_mask(config=cfg, inputs_embeds=embeds, attention_mask=attention_mask,
                                          past_key_values=DynamicCache(config=cfg) if cache else None,
                                          position_ids=position_ids)
            except Exception as err:  # noqa: BLE001 - recorded, not fatal
                report[key] = dict(error=f"{type(err).__name__}: {err}")
                continue
            entry = dict(kind="none" if mask is None else f"{mask.dim()}-D {str(mask.dtype).replace('torch.', '')}",
                         shape=None if mask is None else list(mask.shape))
            if impl == "sdpa":
                if mask is None:
                    # sdpa then runs is_causal=True over the whole row.
                    entry["equals_wanted"] = bool(torch.equal(wanted, causal.expand_as(wanted)))
                elif mask.dim() == 4 and mask.dtype == torch.bool:
                    entry["equals_wanted"] = bool(torch.equal(mask[:, 0], wanted))
            report[key] = entry
            del mask
    del wanted
    return report


# --------------------------------------------------------------------------------------
# attention implementations

def dash_skip_reason(device: torch.device, allow_cpu: bool = False) -> str | None:
    if device.type == "cpu" and not allow_cpu:
        return "no GPU: dash's kernels need a Hopper (sm90) GPU and this run is on the CPU"
    if device.type == "cpu":
        try:
            import dash  # noqa: F401
        except Exception as err:  # noqa: BLE001
            return f"cannot import dash: {type(err).__name__}: {err}"
        return None
    return tg.check_environment("dash", device)


def register_dash() -> dict:
    """dash_hf.register(): attn_implementation="dash". Returns what was done, for the JSON."""
    import dash.integrations.transformers as dash_hf

    return dict(name=dash_hf.register(), module=dash_hf.__file__)


def sdpa_context(backend: str):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    order = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION,
             "efficient": SDPBackend.EFFICIENT_ATTENTION, "math": SDPBackend.MATH}
    if backend == "default":
        return contextlib.nullcontext()
    if backend == "cudnn":  # cuDNN first; torch falls back down the list where cuDNN refuses
        return sdpa_kernel([order["cudnn"], order["flash"], order["efficient"], order["math"]], set_priority=True)
    return sdpa_kernel([order[backend]])


class SdpaRecorder:
    """Wraps torch.nn.functional.scaled_dot_product_attention (transformers looks it up at
    every call) and asks torch's dispatcher which backend each call gets."""

    def __init__(self):
        self.calls = collections.Counter()

    @contextlib.contextmanager
    def watching(self):
        functional = torch.nn.functional
        original = functional.scaled_dot_product_attention

        def recording(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                      enable_gqa=False, **kwargs):
            try:
                q, k, v = query, key, value
                device_type = q.device.type
                if torch.is_autocast_enabled(device_type):  # SDPA is autocast: it sees these dtypes
                    dtype = torch.get_autocast_dtype(device_type)
                    q, k, v = (t.to(dtype) if t.is_floating_point() else t for t in (q, k, v))
                with torch.no_grad():
                    choice = torch._fused_sdp_choice(q, k, v, attn_mask, dropout_p, is_causal, scale=scale,
                                                     enable_gqa=enable_gqa)
                backend = BACKEND_NAMES.get(int(choice), str(choice))
                dtype = str(q.dtype).replace("torch.", "")
            except Exception as err:  # noqa: BLE001 - a question about the call, never its failure
                backend, dtype = f"unknown ({type(err).__name__})", "?"
            mask = "none" if attn_mask is None else \
                f"{attn_mask.dim()}-D {str(attn_mask.dtype).replace('torch.', '')} {list(attn_mask.shape)}"
            self.calls[f"{backend} | {dtype} | mask {mask} | is_causal={bool(is_causal)} | "
                       f"enable_gqa={bool(enable_gqa)} | q heads {query.shape[1]}, kv heads {key.shape[1]}"] += 1
            return original(query, key, value, attn_mask=attn_mask, dropout_p=dropout_p, is_causal=is_causal,
                            scale=scale, enable_gqa=enable_gqa, **kwargs)

        functional.scaled_dot_product_attention = recording
        try:
            yield self
        finally:
            functional.scaled_dot_product_attention = original

    def backends(self) -> list[str]:
        return sorted({call.split(" | ")[0] for call in self.calls})


def dash_op_spy():
    """A TorchDispatchMode that counts the dash ops of a step with their `deterministic`
    argument (the backward ones show whether the ordered backward really ran)."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class DashOpSpy(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.calls = collections.Counter()

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if getattr(func, "namespace", None) == "dash":
                names = [a.name for a in func._schema.arguments]
                det = kwargs.get("deterministic")
                if det is None and "deterministic" in names and names.index("deterministic") < len(args):
                    det = args[names.index("deterministic")]
                self.calls[f"{func._schema.name} deterministic={det}"] += 1
            return func(*args, **kwargs)

    return DashOpSpy()


ATTENTION_EVENT_WORDS = ("attention", "attn", "fmha", "flash", "sdpa", "cudnn", "dash", "mha")


def profile_attention(step_fn, device: torch.device) -> dict:
    """Profiles one call of step_fn; returns the attention-looking ops and kernels (aten op
    names tell the SDPA backend: _scaled_dot_product_{cudnn,efficient,flash}_attention...)."""
    from torch.profiler import ProfilerActivity, profile
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    with profile(activities=activities) as prof:
        result = step_fn()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
    events = []
    for event in prof.key_averages():
        name = event.key
        if any(word in name.lower() for word in ATTENTION_EVENT_WORDS):
            device_us = getattr(event, "self_device_time_total", None)
            if device_us is None:
                device_us = getattr(event, "self_cuda_time_total", 0.0)
            events.append(dict(name=name[:200], count=event.count, self_device_us=round(float(device_us or 0.0), 1)))
    events.sort(key=lambda e: (-e["self_device_us"], e["name"]))
    ran = sorted({kind for e in events for kind, words in (
        ("cudnn", ("_cudnn_attention", "cudnn_generated", "sdpa_sm")),
        ("efficient", ("_efficient_attention", "fmha_cutlass", "memeffattention", "attentionkernel")),
        ("flash", ("_flash_attention", "flash_fwd", "flash_bwd")),
        ("math", ("_scaled_dot_product_attention_math",)),
        ("dash varlen", ("dash::attn_varlen",)),
        ("dash fixed-length", ("dash::attn_fwd", "dash::attn_bwd")),
    ) if any(w in e["name"].lower() for w in words)})
    return dict(backends_seen=ran, events=events[:24]), result


# --------------------------------------------------------------------------------------
# training

@dataclasses.dataclass
class RunSpec:
    name: str  # e.g. "dash#1", "sdpa[cudnn]", "sdpa_unpacked[default]"
    impl: str  # transformers attn_implementation: "dash" or "sdpa"
    layout: str  # which batches: "padded", "packed" or "unpacked"
    backend: str | None  # for sdpa: an SDPA_BACKEND_CHOICES entry
    deterministic: bool


def train_run(spec: RunSpec, pristine, batches: list[Batch], args: argparse.Namespace, device: torch.device,
              log=print) -> dict:
    opt_cfg = optimizer_config(args)
    autocast = args.precision == "autocast"
    sync = (lambda: torch.cuda.synchronize(device)) if device.type == "cuda" else (lambda: None)
    losses, grad_norms, step_s = [], [], []
    record = dict(name=spec.name, impl=spec.impl, layout=spec.layout, sdpa_backend_requested=spec.backend,
                  deterministic=spec.deterministic)
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    with tg.determinism(spec.deterministic, args.seed):
        model = copy.deepcopy(pristine)
        model.set_attn_implementation(spec.impl)
        model.to(device=device, dtype=torch.float32 if autocast else torch.bfloat16)
        model.train()
        optimizer = tg.make_optimizer(model, opt_cfg)
        params = [p for p in model.parameters()]

        def one_step(step: int):
            kwargs = to_device(batches[step].kwargs, device)
            with (torch.autocast(device.type, dtype=torch.bfloat16) if autocast else contextlib.nullcontext()), \
                    (sdpa_context(spec.backend) if spec.impl == "sdpa" else contextlib.nullcontext()):
                loss = model(**kwargs, use_cache=False).loss
            loss.backward()
            grad_norm = torch.nn.utils.clip_grad_norm_(params, opt_cfg.grad_clip)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            return loss.detach(), grad_norm

        for step in range(args.steps):
            lr = tg.lr_at(step, opt_cfg)
            for group in optimizer.param_groups:
                group["lr"] = lr
            sync()
            t0 = time.perf_counter()
            if step == 0:  # warm-up step: which attention really runs
                if spec.impl == "sdpa":
                    recorder = SdpaRecorder()
                    with recorder.watching():
                        loss, grad_norm = one_step(step)
                    record["sdpa_calls_step0"] = dict(recorder.calls)
                    record["sdpa_backend_ran"] = recorder.backends()
                else:
                    spy = dash_op_spy()
                    with spy:
                        loss, grad_norm = one_step(step)
                    record["dash_ops_step0"] = dict(spy.calls)
            elif step == 1 and device.type == "cuda" and not args.no_profile:  # warm-up step: a profile of it
                try:
                    record["profile_step1"], (loss, grad_norm) = profile_attention(lambda: one_step(step), device)
                except Exception as err:  # noqa: BLE001 - the profiler is evidence, not the point
                    record["profile_step1"] = dict(error=f"{type(err).__name__}: {err}")
                    loss, grad_norm = one_step(step)
            else:
                loss, grad_norm = one_step(step)
            loss_value, grad_norm_value = loss.item(), grad_norm.item()
            sync()
            step_s.append(time.perf_counter() - t0)
            losses.append(loss_value)
            grad_norms.append(grad_norm_value)
            if step % args.log_every == 0 or step == args.steps - 1:
                log(f"  {spec.name:<24s} step {step:4d}  loss {loss_value:.5f}  grad norm {grad_norm_value:.4f}  "
                    f"lr {lr:.2e}  {step_s[-1] * 1e3:8.1f} ms")
            if not math.isfinite(loss_value):
                log(f"  {spec.name}: loss is {loss_value} at step {step}: stopping")
                break
        digest = tg.weights_sha256(model)
    timed = slice(args.timing_warmup, None) if len(step_s) > args.timing_warmup else slice(None)
    timed_tokens = sum(b.real_tokens for b in batches[:len(step_s)][timed])
    timed_s = sum(step_s[timed])
    record.update(
        loss=losses, grad_norm=grad_norms, step_ms=[round(t * 1e3, 3) for t in step_s],
        timed_steps=len(step_s[timed]), tokens_per_s=timed_tokens / timed_s if timed_s > 0 else None,
        mean_step_ms=timed_s / max(1, len(step_s[timed])) * 1e3, final_loss=losses[-1] if losses else None,
        weights_sha256=digest,
        peak_memory_gib=torch.cuda.max_memory_allocated(device) / 2**30 if device.type == "cuda" else None)
    del model, optimizer, params
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()
    return record


def attention_summary(run: dict) -> str:
    if "error" in run:
        return "FAILED"
    if run["impl"] == "dash":
        ops = run.get("dash_ops_step0", {})
        names = sorted({k.split("::")[-1].split(" ")[0] for k in ops})
        dets = sorted({k.split("deterministic=")[-1] for k in ops if "_bwd" in k})
        return f"dash {'/'.join(n.replace('attn_', '') for n in names) or '?'} det={','.join(dets) or '?'}"
    ran = run.get("sdpa_backend_ran") or ["?"]
    return f"sdpa {'+'.join(ran)}"


# --------------------------------------------------------------------------------------
# comparisons

def loss_difference(a: list[float], b: list[float]) -> dict:
    diffs = [abs(x - y) for x, y in zip(a, b)]
    if not diffs:
        return dict(max_abs=None)
    worst = max(range(len(diffs)), key=diffs.__getitem__)
    return dict(max_abs=diffs[worst], step_of_max=worst, mean_abs=sum(diffs) / len(diffs), final_abs=diffs[-1])


def bitwise_check(runs: list[dict]) -> dict:
    a, b = runs[0], runs[1]
    diff_step = first_difference(a["loss"], b["loss"])
    result = dict(runs=[r["name"] for r in runs[:2]], identical_losses=diff_step is None,
                  first_differing_step=diff_step, identical_grad_norms=a["grad_norm"] == b["grad_norm"],
                  identical_weights=a["weights_sha256"] == b["weights_sha256"],
                  weights_sha256=[a["weights_sha256"], b["weights_sha256"]],
                  max_abs_loss_diff=loss_difference(a["loss"], b["loss"])["max_abs"])
    result["passed"] = result["identical_losses"] and result["identical_grad_norms"] and result["identical_weights"]
    return result


# --------------------------------------------------------------------------------------
# command line

def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", choices=["padded", "packed"], default="padded")
    parser.add_argument("--impls", default=None,
                        help="comma-separated from dash, sdpa, sdpa_unpacked (packed data only); "
                             "default dash,sdpa (+ sdpa_unpacked with --data packed)")
    parser.add_argument("--sdpa-backends", default=None,
                        help=f"comma-separated from {', '.join(SDPA_BACKEND_CHOICES)}: one sdpa run each "
                             "(default on a GPU: cudnn,default,math with padded data, cudnn,default with "
                             "packed; default on the CPU)")
    parser.add_argument("--device", default="cuda", help="cuda (default) or cpu (smoke test: dash is skipped)")
    parser.add_argument("--tiny", action="store_true",
                        help="tiny model and data (2 layers, hidden 256, 4 / 2 heads of 64, short rows, 3 steps)")
    parser.add_argument("--precision", choices=["autocast", "bf16"], default="autocast",
                        help="autocast: fp32 weights + torch.autocast(bf16), as Trainer(bf16=True) (default); "
                             "bf16: the model cast to bf16")
    parser.add_argument("--dash-runs", type=int, default=2, help="dash trainings from the same seed (default 2)")
    parser.add_argument("--loss-tol", type=float, default=0.02,
                        help="max |loss_dash - loss_sdpa| allowed at any step, or 2x the sdpa-vs-sdpa "
                             "difference if larger (default %(default)s)")
    parser.add_argument("--packed-via", choices=["position_ids", "cu_seq_lens"], default="position_ids",
                        help="packed data: DataCollatorWithFlattening's position_ids only (default), or also "
                             "its cu_seq_lens_q/k + max_length_q/k kwargs (dash then uses those)")
    parser.add_argument("--out", type=pathlib.Path, default=None,
                        help="JSON path (default $OUT/train_hf_llama_<data>.json, else examples/out/...)")
    parser.add_argument("--log-every", type=int, default=10)
    parser.add_argument("--no-profile", action="store_true", help="no profiler pass over step 1")
    sizes = parser.add_argument_group("model (defaults: Llama-3-8B layer shapes, 2 layers, 32k vocabulary)")
    sizes.add_argument("--layers", type=int, default=None, help="default 2")
    sizes.add_argument("--hidden-size", type=int, default=None, help="default 4096")
    sizes.add_argument("--intermediate-size", type=int, default=None, help="default 14336")
    sizes.add_argument("--heads", type=int, default=None, help="query heads, default 32")
    sizes.add_argument("--kv-heads", type=int, default=None, help="K/V heads, default 8")
    sizes.add_argument("--head-dim", type=int, default=None, help="default 128")
    sizes.add_argument("--vocab-size", type=int, default=None, help="default 32000")
    sizes.add_argument("--rope-theta", type=float, default=500000.0)
    data = parser.add_argument_group("data")
    data.add_argument("--batch-size", type=int, default=None, help="padded rows per step, default 8")
    data.add_argument("--max-len", type=int, default=None, help="padded: longest document, default 4096")
    data.add_argument("--min-len-frac", type=float, default=0.25, help="padded: shortest document / max-len")
    data.add_argument("--packed-len", type=int, default=None, help="packed: tokens in the row, default 16384")
    data.add_argument("--min-doc-len", type=int, default=None, help="packed: default 64")
    data.add_argument("--max-doc-len", type=int, default=None, help="packed: default 4096")
    data.add_argument("--data-vocab", type=int, default=None, help="distinct tokens in the data, default 4096")
    data.add_argument("--copy-len", type=int, default=None, help="copied span length, default 32")
    data.add_argument("--copy-every", type=int, default=None, help="one copied span per this many tokens, default 128")
    opt = parser.add_argument_group("training")
    opt.add_argument("--steps", type=int, default=None, help="default 50")
    opt.add_argument("--timing-warmup", type=int, default=None, help="steps left out of tokens/s, default 5")
    opt.add_argument("--lr", type=float, default=3e-4)
    opt.add_argument("--warmup-steps", type=int, default=None, help="LR warm-up, default steps // 10")
    opt.add_argument("--weight-decay", type=float, default=0.1)
    opt.add_argument("--grad-clip", type=float, default=1.0)
    opt.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    full = dict(layers=2, hidden_size=4096, intermediate_size=14336, heads=32, kv_heads=8, head_dim=128,
                vocab_size=32000, batch_size=8, max_len=4096, packed_len=16384, min_doc_len=64, max_doc_len=4096,
                data_vocab=4096, copy_len=32, copy_every=128, steps=50, timing_warmup=5)
    tiny = dict(layers=2, hidden_size=256, intermediate_size=512, heads=4, kv_heads=2, head_dim=64,
                vocab_size=1024, batch_size=4, max_len=128, packed_len=512, min_doc_len=16, max_doc_len=128,
                data_vocab=256, copy_len=8, copy_every=32, steps=3, timing_warmup=1)
    for key, value in (tiny if args.tiny else full).items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    args.device = torch.device(args.device)
    default_impls = "dash,sdpa" + (",sdpa_unpacked" if args.data == "packed" else "")
    args.impls = [s.strip() for s in (args.impls or default_impls).split(",") if s.strip()]
    for impl in args.impls:
        if impl not in ("dash", "sdpa", "sdpa_unpacked"):
            parser.error(f"unknown implementation {impl!r} in --impls")
        if impl == "sdpa_unpacked" and args.data != "packed":
            parser.error("sdpa_unpacked needs --data packed")
    # math reduces in fp32 (torch's default for bf16 / fp16 inputs): the reference the bf16
    # kernels' losses scatter around. Its scores of a packed 16k row (35 GB a layer) do not fit.
    default_backends = ("default" if args.device.type != "cuda" else
                        "cudnn,default,math" if args.data == "padded" else "cudnn,default")
    args.sdpa_backends = [s.strip() for s in (args.sdpa_backends or default_backends).split(",") if s.strip()]
    for backend in args.sdpa_backends:
        if backend not in SDPA_BACKEND_CHOICES:
            parser.error(f"unknown SDPA backend {backend!r}: choose from {', '.join(SDPA_BACKEND_CHOICES)}")
    if args.hidden_size != args.heads * args.head_dim:
        print(f"note: hidden size {args.hidden_size} != heads x head_dim {args.heads * args.head_dim} "
              "(Llama allows it; o_proj maps back)")
    if args.dash_runs < 1:
        parser.error("--dash-runs must be >= 1")
    if args.heads % args.kv_heads:
        parser.error(f"--heads {args.heads} must be a multiple of --kv-heads {args.kv_heads}")
    if not 0 < args.min_len_frac <= 1:
        parser.error("--min-len-frac must be in (0, 1]")
    if not 1 <= args.min_doc_len <= args.max_doc_len:
        parser.error("need 1 <= --min-doc-len <= --max-doc-len")
    if args.out is None:
        base = pathlib.Path(os.environ["OUT"]) if os.environ.get("OUT") else EXAMPLES / "out"
        args.out = base / f"train_hf_llama_{args.data}.json"
    return args


def environment(device: torch.device) -> dict:
    import transformers
    env = dict(torch=torch.__version__, transformers=transformers.__version__, python=sys.version.split()[0],
               device=str(device), date=datetime.datetime.now().isoformat(timespec="seconds"),
               cublas_workspace_config=os.environ.get("CUBLAS_WORKSPACE_CONFIG"))
    if device.type == "cuda" and torch.cuda.is_available():
        env.update(device_name=torch.cuda.get_device_name(device), cuda=torch.version.cuda,
                   cudnn=torch.backends.cudnn.version(),
                   capability=".".join(map(str, torch.cuda.get_device_capability(device))))
    try:
        env["git_commit"] = subprocess.run(["git", "rev-parse", "HEAD"], cwd=EXAMPLES, capture_output=True,
                                           text=True, timeout=10).stdout.strip() or None
    except Exception:  # noqa: BLE001 - a copy of the tree without .git
        env["git_commit"] = None
    return env


def run_experiment(args: argparse.Namespace, allow_cpu_dash: bool = False, log=print) -> tuple[dict, int]:
    """Everything but argument parsing; returns (the JSON record, the exit status).
    allow_cpu_dash: run dash on the CPU (tests, with stand-in kernels registered)."""
    import transformers

    device = args.device
    if device.type == "cuda" and not torch.cuda.is_available():
        return dict(error="CUDA is not available"), 2
    config = llama_config(args)
    record = dict(command=" ".join(sys.argv), environment=environment(device), config=config.to_dict(),
                  args={k: str(v) if isinstance(v, (pathlib.Path, torch.device)) else v for k, v in vars(args).items()},
                  precision=("fp32 parameters / grads / AdamW state, forward under torch.autocast(bfloat16) "
                             "(transformers Trainer with bf16=True)") if args.precision == "autocast"
                  else "bf16 parameters, no autocast",
                  skipped={}, runs={}, checks={})

    # Runs to do.
    specs: list[RunSpec] = []
    layout = args.data
    if "dash" in args.impls:
        reason = dash_skip_reason(device, allow_cpu_dash)
        if reason is None:
            try:
                record["dash_registration"] = register_dash()
            except Exception as err:  # noqa: BLE001
                reason = f"registering dash with transformers failed: {type(err).__name__}: {err}"
        if reason is None:
            specs += [RunSpec(f"dash#{i + 1}", "dash", layout, None, True) for i in range(args.dash_runs)]
        else:
            record["skipped"]["dash"] = reason
            log(f"dash skipped: {reason}")
    for impl in ("sdpa", "sdpa_unpacked"):
        if impl in args.impls:
            specs += [RunSpec(f"{impl}[{b}]", "sdpa", "unpacked" if impl == "sdpa_unpacked" else layout, b, False)
                      for b in args.sdpa_backends]
    if not specs:
        log("nothing to run")
        return record, 2

    log(f"model: LlamaForCausalLM, {args.layers} layers, hidden {args.hidden_size}, {args.heads} query heads / "
        f"{args.kv_heads} K/V heads x {args.head_dim}, MLP {args.intermediate_size}, vocab {args.vocab_size}; "
        f"{args.precision}; device {device}")
    t0 = time.perf_counter()
    batches = build_batches(args)
    first = batches[layout][0]
    record["data"] = dict(
        layout=layout, steps=args.steps,
        real_tokens_per_step=[b.real_tokens for b in batches[layout]],
        documents_per_step=[len(b.documents) for b in batches[layout]],
        first_step_document_lengths=first.documents,
        padded_shape_per_step=[list(b.kwargs["input_ids"].shape)
                               for b in batches.get("padded", batches.get("unpacked"))],
        model_inputs=sorted(first.kwargs))
    log(f"data ({time.perf_counter() - t0:.1f} s to build): {layout}, {args.steps} steps, "
        f"{sum(record['data']['real_tokens_per_step']) / args.steps:,.0f} real tokens a step on average, "
        f"{sum(record['data']['documents_per_step']) / args.steps:.1f} documents a step; inputs {sorted(first.kwargs)}")

    t0 = time.perf_counter()
    torch.manual_seed(args.seed)  # transformers' init draws from the global generator, on the CPU here
    pristine = transformers.AutoModelForCausalLM.from_config(config, attn_implementation="sdpa",
                                                             dtype=torch.float32)
    if not isinstance(pristine, transformers.LlamaForCausalLM):
        raise TypeError(f"expected a LlamaForCausalLM, got {type(pristine).__name__}")
    record["parameters"] = sum(p.numel() for p in pristine.parameters())
    record["initial_weights_sha256"] = tg.weights_sha256(pristine)
    log(f"model built from seed {args.seed} in {time.perf_counter() - t0:.1f} s: "
        f"{record['parameters'] / 1e6:.1f}M parameters, "
        f"initial weights sha256 {record['initial_weights_sha256'][:16]}...")

    try:
        record["masks"] = describe_masks(config, batches[layout][0], device,
                                         ("sdpa", "dash") if "dash_registration" in record else ("sdpa",))
        for key, entry in record["masks"].items():
            log(f"  mask transformers builds for {key}: {entry}")
    except Exception as err:  # noqa: BLE001
        record["masks"] = dict(error=f"{type(err).__name__}: {err}")

    for spec in specs:
        log(f"=== {spec.name}: attn_implementation={spec.impl!r}, {spec.layout} batches"
            + (f", SDPA backend {spec.backend}" if spec.backend else "")
            + (", torch.use_deterministic_algorithms(True)" if spec.deterministic else ""))
        try:
            run = train_run(spec, pristine, batches[spec.layout], args, device, log)
        except Exception as err:  # noqa: BLE001 - recorded; the other runs still go
            log(f"  {spec.name} FAILED: {type(err).__name__}: {err}")
            run = dict(name=spec.name, impl=spec.impl, layout=spec.layout, sdpa_backend_requested=spec.backend,
                       error=f"{type(err).__name__}: {err}", traceback=traceback.format_exc(limit=12))
            gc.collect()
            if device.type == "cuda":
                torch.cuda.empty_cache()
        record["runs"][spec.name] = run
        if "error" not in run:
            log(f"  {spec.name}: final loss {run['final_loss']:.5f}, {run['tokens_per_s'] or 0:,.0f} tokens/s, "
                f"attention: {attention_summary(run)}")

    status = finish(record, args, log)
    return record, status


def finish(record: dict, args: argparse.Namespace, log=print) -> int:
    runs = record["runs"]
    ok_runs = {name: r for name, r in runs.items() if "error" not in r}
    dash_runs = [r for name, r in runs.items() if r["impl"] == "dash"]
    sdpa_runs = [r for r in ok_runs.values() if r["impl"] == "sdpa"]
    status = 0 if ok_runs else 2

    # Bitwise reproducibility of dash.
    if dash_runs:
        if any("error" in r for r in dash_runs):
            record["checks"]["bitwise"] = dict(passed=False, reason="a dash run failed")
            status = 1
        elif len(dash_runs) >= 2:
            record["checks"]["bitwise"] = bitwise_check(dash_runs)
            if not record["checks"]["bitwise"]["passed"]:
                status = 1
        else:
            record["checks"]["bitwise"] = dict(passed=None, reason="one dash run (--dash-runs 1): not checked")

    # dash against sdpa, with the sdpa-vs-sdpa difference as the noise floor.
    floor = 0.0
    pairs = {}
    for i, a in enumerate(sdpa_runs):
        for b in sdpa_runs[i + 1:]:
            pairs[f"{a['name']} vs {b['name']}"] = loss_difference(a["loss"], b["loss"])
            floor = max(floor, pairs[f"{a['name']} vs {b['name']}"]["max_abs"] or 0.0)
    tolerance = max(args.loss_tol, 2 * floor)
    tracking = dict(sdpa_vs_sdpa=pairs, noise_floor=floor, tolerance=tolerance, dash_vs_sdpa={})
    dash_ok = [r for r in dash_runs if "error" not in r]
    if dash_ok and sdpa_runs:
        for s in sdpa_runs:
            tracking["dash_vs_sdpa"][f"{dash_ok[0]['name']} vs {s['name']}"] = loss_difference(dash_ok[0]["loss"],
                                                                                              s["loss"])
        worst = max(d["max_abs"] for d in tracking["dash_vs_sdpa"].values())
        tracking.update(max_abs=worst, passed=worst <= tolerance)
        if not tracking["passed"] and status == 0:
            status = 3
    record["checks"]["tracking"] = tracking
    record["exit_status"] = status

    # Summary.
    log("\n=== summary ===")
    reference = dash_ok[0] if dash_ok else next(iter(ok_runs.values()), None)
    vs = f"max|dLoss| vs {reference['name'] if reference else '-'}"
    log(f"{'run':<24s} {'attention that ran':<36s} {'tokens/s':>12s} {'ms/step':>9s} {'final loss':>11s} "
        f"{vs[:30]:>30s}  weights sha256")
    for name, r in runs.items():
        if "error" in r:
            log(f"{name:<24s} FAILED: {r['error'][:100]}")
            continue
        diff = "" if reference is None or r is reference else \
            f"{loss_difference(reference['loss'], r['loss'])['max_abs']:.2e}"
        log(f"{name:<24s} {attention_summary(r):<36s} {r['tokens_per_s'] or 0:>12,.0f} {r['mean_step_ms']:>9.1f} "
            f"{r['final_loss']:>11.5f} {diff:>30s}  {r['weights_sha256'][:16]}")
    for impl, reason in record["skipped"].items():
        log(f"{impl:<24s} skipped: {reason}")

    names = list(ok_runs)
    if names:
        width = max(12, *(len(n) for n in names))
        log("\nloss per step:")
        log("step " + " ".join(f"{n:>{width}s}" for n in names))
        for step in range(max(len(ok_runs[n]["loss"]) for n in names)):
            log(f"{step:4d} " + " ".join(f"{ok_runs[n]['loss'][step]:>{width}.6f}" if step < len(ok_runs[n]["loss"])
                                         else " " * width for n in names))

    bitwise = record["checks"].get("bitwise")
    if bitwise is not None:
        if bitwise.get("passed") is True:
            log(f"\nPASS bitwise: {' and '.join(bitwise['runs'])}: identical losses at all steps, "
                f"identical grad norms, identical final weights (sha256 {bitwise['weights_sha256'][0][:16]}...)")
        elif bitwise.get("passed") is None:
            log(f"\nbitwise: {bitwise['reason']}")
        else:
            reason = bitwise.get("reason") or (
                ("losses identical" if bitwise["identical_losses"]
                 else f"losses DIFFER from step {bitwise['first_differing_step']}")
                + f", grad norms {'identical' if bitwise['identical_grad_norms'] else 'DIFFER'}"
                + f", weights {'identical' if bitwise['identical_weights'] else 'DIFFER'}")
            log(f"\nFAIL bitwise: {reason}")
    if "passed" in tracking:
        log(f"{'PASS' if tracking['passed'] else 'FAIL'} tracking: "
            f"max |loss_dash - loss_sdpa| = {tracking['max_abs']:.3e} "
            f"over {len(tracking['dash_vs_sdpa'])} sdpa run(s); tolerance {tolerance:.3e} "
            f"(--loss-tol {args.loss_tol}, sdpa-vs-sdpa max difference {floor:.3e})")
    elif dash_ok:
        log("tracking: no sdpa run to compare with")
    return status


def write_outputs(record: dict, args: argparse.Namespace, log=print) -> None:
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=1))
    log(f"wrote {args.out}")
    runs = {n: r for n, r in record["runs"].items() if "error" not in r}
    if not runs:
        return
    curves = {n: r["loss"] for n, r in runs.items()}
    diff = None
    dash = next((r for r in runs.values() if r["impl"] == "dash"), None)
    sdpa = next((r for r in runs.values() if r["impl"] == "sdpa"), None)
    if dash and sdpa:
        diff = (f"{dash['name']} - {sdpa['name']}", [a - b for a, b in zip(dash["loss"], sdpa["loss"])])
    title = (f"LlamaForCausalLM {args.layers}x{args.hidden_size}, GQA {args.heads}/{args.kv_heads}, "
             f"{args.data} batches, {args.precision}\n{record['environment'].get('device_name', str(args.device))}")
    png = args.out.with_suffix(".png")
    if tg.plot_losses(curves, png, title, uniform=math.log(args.vocab_size), diff=diff):
        log(f"wrote {png}")


def main(argv=None) -> int:
    tg.set_cublas_workspace()  # before CUDA starts: the deterministic dash runs need it
    args = parse_args(argv)
    if args.device.type == "cuda" and not torch.cuda.is_available():
        print("error: CUDA is not available on this machine (a CPU smoke test: --device cpu --impls sdpa --tiny)",
              file=sys.stderr)
        return 2
    record, status = run_experiment(args)
    write_outputs(record, args)
    return status


if __name__ == "__main__":
    sys.exit(main())
