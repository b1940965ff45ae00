"""Train a small GPT with dash's FlashAttention-3 drop-in (or PyTorch SDPA) on a synthetic
language the script generates itself, deterministically.

  python examples/train_gpt.py                                   # dash, 300 steps, defaults below
  python examples/train_gpt.py --deterministic --out out/det     # bitwise reproducible run
  python examples/train_gpt.py --attn sdpa                       # SDPA with the cuDNN backend
  python examples/train_gpt.py --steps 5 --seqlen 256 --layers 1 # smoke test
  python examples/train_gpt.py --packed --deterministic          # rows of packed documents (varlen)

Model: pre-LayerNorm decoder (no biases, RoPE, GELU MLP, untied head), default 4 layers,
d_model 1024, head_dim 128 (8 heads), seqlen 2048, batch 8 (16384 tokens a step). Parameters
and AdamW state are fp32; the forward runs under torch.autocast(bfloat16), so attention
sees bf16 q, k, v in the (batch, seqlen, heads, head_dim) layout of flash_attn_interface.

--attn dash calls FlashAttention-3's API exactly as an FA3 user would, after one line that
points `flash_attn_interface` at dash:

    import dash
    dash.patch_flash_attn_interface()
    from flash_attn_interface import flash_attn_func
    out = flash_attn_func(q, k, v, causal=True, deterministic=...)

--attn sdpa runs torch.nn.functional.scaled_dot_product_attention(is_causal=True) under
sdpa_kernel(--sdpa-backend): cuDNN by default; FlashAttention-2 (flash) by default with
--deterministic, because cuDNN's attention refuses to run under
torch.use_deterministic_algorithms(True).

--packed: every row is documents packed back to back instead of one sequence (the tokens of
a row are those of the fixed-length run; only the attention and the positions change).
Document lengths are drawn log-uniformly between --min-doc-len (64) and --max-doc-len (the
row length), from a generator seeded by (seed, step); the last document of a row is cut to
fill it. Attention is causal within each document and never crosses into another:
--attn dash calls FlashAttention-3's flash_attn_varlen_func (dash.flash_attn_interface's,
through the same patched `flash_attn_interface` module) on the flattened batch with the
documents' cu_seqlens; --attn sdpa runs scaled_dot_product_attention with a dense boolean
(batch, 1, seqlen, seqlen) document-causal mask (same document and key <= query), which
needs a backend that takes a mask: 'efficient' by default (FlashAttention-2 takes none;
cuDNN may, try --sdpa-backend cudnn). RoPE positions restart at 0 in every document, and
the target of each document's last token (the next document's first token) is ignored
(-100), as transformers' DataCollatorWithFlattening does. The held-out evaluation runs on
unpacked rows. GPU, both kernels, bitwise check:
    python examples/train_gpt.py --packed --deterministic --steps 50
    python examples/train_gpt.py --packed --attn sdpa --steps 50
    python examples/check_bitwise.py --packed --steps 50

--deterministic: seeds, CUBLAS_WORKSPACE_CONFIG=:4096:8 (set before CUDA starts),
torch.use_deterministic_algorithms(True), and deterministic=True to flash_attn_func (dash's
ordered backward). No dropout, so no random numbers are drawn on the GPU at all.

Data (SyntheticLanguage): token streams from a fixed random sparse Markov chain (each token
has --successors likely next tokens, plus --noise probability of a uniformly random token),
in which one span of --copy-len tokens in every --copy-every is a copy of an earlier span of
the same sequence. The chain part is learnable from bigram statistics; the copied spans are
predictable exactly only by attention that looks back (an induction head), so a model that
learns to copy gets below the "bigram floor" (the loss of the true chain, printed and drawn
in the plot), and its held-out loss on copied spans (evaluated every --eval-every steps)
drops below the loss on the rest. Everything is generated on the CPU from the seed: step s
always trains on the same tokens, whatever the device.

Writes to --out: train_gpt_<attn>_<det|nondet>[_packed].json (config, per-step loss, grad
norm, lr, step time, SHA256 of the final weights) and a loss plot .png next to it.

The builders (GPTConfig, SyntheticLanguage, build_model, make_optimizer, train_step, train,
and for packed rows sample_document_lengths, Documents) are importable without running
anything: examples/check_bitwise.py, examples/train_hf_llama.py and
bench/bench_train_step.py use them.
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import datetime
import hashlib
import json
import math
import os
import pathlib
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from torch import nn

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # `import dash` from the repository checkout

CUBLAS_WORKSPACE = ":4096:8"
SDPA_BACKENDS = ("cudnn", "flash", "efficient", "math")
TIMING_SKIP = 5  # first steps left out of the median step time (warm-up, cuDNN plans, allocator)


# --------------------------------------------------------------------------------------
# configuration

@dataclasses.dataclass
class GPTConfig:
    # model
    vocab_size: int = 512
    seqlen: int = 2048
    layers: int = 4
    d_model: int = 1024
    head_dim: int = 128
    mlp_ratio: int = 4
    rope_base: float = 10000.0
    # optimisation
    batch_size: int = 8
    steps: int = 300
    lr: float = 6e-4
    min_lr_ratio: float = 0.1
    warmup_steps: int | None = None  # None: max(1, steps // 10)
    weight_decay: float = 0.1
    grad_clip: float = 1.0
    seed: int = 0
    # data
    successors: int = 8
    noise: float = 0.05
    copy_len: int = 32
    copy_every: int = 128
    # packed rows (--packed): documents back to back, lengths log-uniform in [min, max]
    packed: bool = False
    min_doc_len: int = 64
    max_doc_len: int | None = None  # None: seqlen

    @property
    def doc_len_range(self) -> tuple[int, int]:
        return self.min_doc_len, self.max_doc_len or self.seqlen

    @property
    def heads(self) -> int:
        return self.d_model // self.head_dim

    @property
    def warmup(self) -> int:
        return self.warmup_steps if self.warmup_steps is not None else max(1, self.steps // 10)

    def validate(self) -> None:
        if self.d_model % self.head_dim:
            raise ValueError(f"d_model {self.d_model} is not a multiple of head_dim {self.head_dim}")
        if self.head_dim % 2:
            raise ValueError(f"head_dim {self.head_dim} must be even (RoPE)")
        if not 0 <= self.noise <= 1:
            raise ValueError(f"noise {self.noise} must be in [0, 1]")
        if self.successors < 1 or self.successors > self.vocab_size:
            raise ValueError(f"successors {self.successors} must be in [1, vocab_size]")
        if self.copy_len > 0 and self.copy_len > self.copy_every:
            raise ValueError(f"copy_len {self.copy_len} must be <= copy_every {self.copy_every}")
        low, high = self.doc_len_range
        if not 1 <= low <= high <= self.seqlen:
            raise ValueError(f"document lengths [{low}, {high}] must satisfy 1 <= min <= max <= seqlen {self.seqlen}")


def lr_at(step: int, cfg: GPTConfig) -> float:
    """Linear warm-up, then cosine decay to min_lr_ratio * lr."""
    if step < cfg.warmup:
        return cfg.lr * (step + 1) / cfg.warmup
    progress = (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup)
    floor = cfg.lr * cfg.min_lr_ratio
    return floor + 0.5 * (cfg.lr - floor) * (1.0 + math.cos(math.pi * min(progress, 1.0)))


# --------------------------------------------------------------------------------------
# data

class SyntheticLanguage:
    """Deterministic token sequences: a sparse random Markov chain with copied spans.

    batch(step) returns (inputs, targets), each (batch_size, seqlen) int64, targets shifted
    by one. Rows are generated on the CPU in chunks of whole batches, each chunk from its
    own generator seeded by (seed, chunk index), so a step's tokens depend only on the
    seed, the step and the shapes. eval_batch() is one held-out batch (a chunk no step
    uses) with a mask of the targets that only copying can predict.
    """

    def __init__(self, cfg: GPTConfig, rows_per_chunk: int = 256):
        self.cfg = cfg
        self.steps_per_chunk = max(1, rows_per_chunk // cfg.batch_size)
        gen = torch.Generator().manual_seed(1_000_003 * cfg.seed + 17)
        vocab, k = cfg.vocab_size, cfg.successors
        # successors[a] : the k tokens that usually follow token a; probs[a]: their odds
        self.successors = torch.rand(vocab, vocab, generator=gen).argsort(dim=1)[:, :k].contiguous()
        weights = torch.exp(1.5 * torch.randn(vocab, k, generator=gen, dtype=torch.float64))
        self.probs = weights / weights.sum(dim=1, keepdim=True)
        self.cum_probs = self.probs.cumsum(dim=1)
        self._cache: tuple[int, tuple[torch.Tensor, torch.Tensor]] | None = None
        self._floor: float | None = None
        self._eval: tuple[torch.Tensor, torch.Tensor] | None = None

    def _generate_chunk(self, index: int) -> tuple[torch.Tensor, torch.Tensor]:
        """(tokens, copied): (rows, seqlen + 1) tokens, and True where a token continues a
        copied span (it and the token before it are copies of two adjacent earlier tokens:
        predictable by looking back, not by the chain)."""
        cfg = self.cfg
        rows, length = self.steps_per_chunk * cfg.batch_size, cfg.seqlen + 1
        vocab, k = cfg.vocab_size, cfg.successors
        gen = torch.Generator().manual_seed(1_000_003 * cfg.seed + 7919 * (index + 1))
        uniform = torch.rand(rows, length, generator=gen, dtype=torch.float64)
        noise_tokens = torch.randint(vocab, (rows, length), generator=gen)
        use_noise = torch.rand(rows, length, generator=gen) < cfg.noise
        tokens = torch.empty(rows, length, dtype=torch.long)
        current = torch.randint(vocab, (rows,), generator=gen)
        tokens[:, 0] = current
        flat_successors = self.successors.view(-1)
        for t in range(1, length):  # sequential in time, vectorised over rows
            pick = (uniform[:, t, None] > self.cum_probs[current]).sum(dim=1).clamp_(max=k - 1)
            current = torch.where(use_noise[:, t], noise_tokens[:, t], flat_successors[current * k + pick])
            tokens[:, t] = current
        source = self._copy_map(rows, length, gen)
        copied = torch.zeros(rows, length, dtype=torch.bool)
        copied[:, 1:] = (source[:, 1:] != torch.arange(1, length)) & (source[:, :-1] == source[:, 1:] - 1)
        return tokens.gather(1, source), copied

    def _copy_map(self, rows: int, length: int, gen: torch.Generator) -> torch.Tensor:
        """(rows, length) source position of every token: itself, or for the positions of a
        copied span, the earlier position it copies (resolved through earlier copies)."""
        cfg = self.cfg
        index = torch.arange(length).expand(rows, length).contiguous()
        windows = length // cfg.copy_every
        if cfg.copy_len <= 0 or windows < 2:
            return index
        span = torch.arange(cfg.copy_len)
        starts = torch.arange(1, windows) * cfg.copy_every  # window 0 has nothing before it
        dst = starts + torch.randint(cfg.copy_every - cfg.copy_len + 1, (rows, windows - 1), generator=gen)
        src = (torch.rand(rows, windows - 1, generator=gen, dtype=torch.float64) * (dst - cfg.copy_len + 1)).long()
        index.scatter_(1, (dst[..., None] + span).view(rows, -1), (src[..., None] + span).view(rows, -1))
        while True:  # pointer jumping: follow copies of copies down to generated tokens
            resolved = index.gather(1, index)
            if torch.equal(resolved, index):
                return index
            index = resolved

    def _chunk(self, index: int) -> tuple[torch.Tensor, torch.Tensor]:
        if self._cache is None or self._cache[0] != index:
            self._cache = (index, self._generate_chunk(index))
        return self._cache[1]

    def batch(self, step: int, device: torch.device | str = "cpu") -> tuple[torch.Tensor, torch.Tensor]:
        tokens, _ = self._chunk(step // self.steps_per_chunk)
        first = (step % self.steps_per_chunk) * self.cfg.batch_size
        rows = tokens[first:first + self.cfg.batch_size]
        return rows[:, :-1].to(device), rows[:, 1:].to(device)

    def eval_batch(self, device: torch.device | str = "cpu") -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(inputs, targets, copied) of a held-out batch; copied marks the targets that
        continue a copied span."""
        if self._eval is None:
            tokens, copied = self._generate_chunk(-1)  # chunk indices of training steps are >= 0
            self._eval = (tokens[:self.cfg.batch_size], copied[:self.cfg.batch_size])
        tokens, copied = self._eval
        return tokens[:, :-1].to(device), tokens[:, 1:].to(device), copied[:, 1:].to(device)

    def chain_nll(self, inputs: torch.Tensor, targets: torch.Tensor) -> float:
        """Mean -log P(target | previous token) under the true chain: what a model that
        knows the chain but ignores the copies would score (the 'bigram floor')."""
        cfg = self.cfg
        inputs, targets = inputs.cpu(), targets.cpu()
        match = self.successors[inputs] == targets[..., None]  # (B, S, k)
        p_chain = (self.probs[inputs] * match).sum(dim=-1)
        p = (1.0 - cfg.noise) * p_chain + cfg.noise / cfg.vocab_size
        return float(-p.log().mean())

    def bigram_floor(self) -> float:
        if self._floor is None:
            tokens, _ = self._chunk(0)
            self._floor = self.chain_nll(tokens[:, :-1], tokens[:, 1:])
        return self._floor

    def packed_batch(self, step: int, device: torch.device | str = "cpu"
                     ) -> tuple[torch.Tensor, torch.Tensor, "Documents"]:
        """(inputs, targets, documents) of step `step` with every row cut into documents.

        The tokens are batch(step)'s, so a packed and a fixed-length run see the same stream;
        the cuts come from a generator seeded by (seed, step) alone. Targets that would cross
        into the next document (each document's last token) are IGNORE_INDEX."""
        cfg = self.cfg
        inputs, targets = self.batch(step)
        gen = torch.Generator().manual_seed(1_000_003 * cfg.seed + 104_729 * (step + 1) + 11)
        low, high = cfg.doc_len_range
        documents = Documents.from_lengths([sample_document_lengths(cfg.seqlen, low, high, gen)
                                            for _ in range(cfg.batch_size)])
        targets = targets.clone()
        targets.view(-1)[documents.cu_seqlens[1:].long() - 1] = IGNORE_INDEX
        return inputs.to(device), targets.to(device), documents.to(device)


IGNORE_INDEX = -100  # F.cross_entropy's default ignore_index, and transformers' label for "no target"


def sample_document_lengths(total: int, min_len: int, max_len: int, gen: torch.Generator) -> list[int]:
    """Lengths of documents that fill `total` tokens back to back: each drawn log-uniformly
    from [min_len, max_len] (short documents common, long ones present, as in real corpora),
    the last one cut to what is left (so it alone may be shorter than min_len)."""
    if not 1 <= min_len <= max_len:
        raise ValueError(f"need 1 <= min_len {min_len} <= max_len {max_len}")
    low, high = math.log(min_len), math.log(max_len)
    lengths, left = [], total
    while left > 0:
        u = float(torch.rand((), generator=gen, dtype=torch.float64))
        length = min(left, max(min_len, min(max_len, int(round(math.exp(low + u * (high - low)))))))
        lengths.append(length)
        left -= length
    return lengths


@dataclasses.dataclass
class Documents:
    """Where the documents of a packed (batch, seqlen) batch lie.

    lengths: per row, its documents' lengths (each row's sum is seqlen). cu_seqlens: (n + 1,)
    int32 boundaries of all n documents in the flattened (batch * seqlen) tokens, what
    flash_attn_varlen_func takes (rows never share a document, so row ends are boundaries
    too). max_seqlen: the longest document. positions: (batch, seqlen) int64 position of
    every token in its document (RoPE restarts at 0). doc_ids: (batch, seqlen) int64 index
    of every token's document."""
    lengths: list[list[int]]
    cu_seqlens: torch.Tensor
    max_seqlen: int
    positions: torch.Tensor
    doc_ids: torch.Tensor
    _mask: torch.Tensor | None = dataclasses.field(default=None, repr=False)

    @classmethod
    def from_lengths(cls, lengths: list[list[int]]) -> "Documents":
        seqlen = sum(lengths[0])
        if any(sum(row) != seqlen for row in lengths) or any(n < 1 for row in lengths for n in row):
            raise ValueError(f"every row's document lengths must be >= 1 and sum to the same length: {lengths}")
        flat = torch.tensor([n for row in lengths for n in row], dtype=torch.int64)
        cu_seqlens = F.pad(flat.cumsum(0), (1, 0)).to(torch.int32)
        doc_ids = torch.repeat_interleave(torch.arange(flat.numel()), flat)
        positions = torch.arange(flat.sum()) - cu_seqlens[:-1].long().repeat_interleave(flat)
        batch = len(lengths)
        return cls(lengths=lengths, cu_seqlens=cu_seqlens, max_seqlen=int(flat.max()),
                   positions=positions.view(batch, seqlen), doc_ids=doc_ids.view(batch, seqlen))

    def to(self, device: torch.device | str) -> "Documents":
        return Documents(self.lengths, self.cu_seqlens.to(device), self.max_seqlen, self.positions.to(device),
                         self.doc_ids.to(device))

    @property
    def count(self) -> int:
        return self.cu_seqlens.numel() - 1

    def attention_mask(self) -> torch.Tensor:
        """(batch, 1, seqlen, seqlen) bool, True where query i may see key j: same document
        and j <= i. Built once per batch (every layer reuses it)."""
        if self._mask is None:
            seqlen = self.doc_ids.shape[1]
            causal = torch.ones(seqlen, seqlen, dtype=torch.bool, device=self.doc_ids.device).tril_()
            self._mask = ((self.doc_ids[:, :, None] == self.doc_ids[:, None, :]) & causal)[:, None]
        return self._mask


# --------------------------------------------------------------------------------------
# model

def load_flash_attn_func():
    """FlashAttention-3's flash_attn_func, served by dash: what an FA3 user adds."""
    import dash
    dash.patch_flash_attn_interface()
    from flash_attn_interface import flash_attn_func
    return flash_attn_func


def load_flash_attn_varlen_func():
    """FlashAttention-3's flash_attn_varlen_func, served by dash (the same function as
    dash.flash_attn_interface.flash_attn_varlen_func)."""
    import dash
    dash.patch_flash_attn_interface()
    from flash_attn_interface import flash_attn_varlen_func
    return flash_attn_varlen_func


def make_attention(attn: str, deterministic: bool = False, sdpa_backend: str = "cudnn"):
    """A causal attention function on (batch, seqlen, heads, head_dim) q, k, v; called with
    documents=Documents (packed rows) it is causal within each document and blind across."""
    if attn == "dash":
        flash_attn_func = load_flash_attn_func()
        flash_attn_varlen_func = load_flash_attn_varlen_func()

        def dash_attention(q, k, v, documents: Documents | None = None):
            if documents is None:
                return flash_attn_func(q, k, v, causal=True, deterministic=deterministic)
            # FA3's packed layout: the batch flattened to (tokens, heads, head_dim), documents
            # told apart by cu_seqlens (reshape is a view here: rows are contiguous in seqlen).
            batch, seqlen, heads, head_dim = q.shape
            flat = [t.reshape(batch * seqlen, t.shape[2], head_dim) for t in (q, k, v)]
            out = flash_attn_varlen_func(*flat, documents.cu_seqlens, documents.cu_seqlens, documents.max_seqlen,
                                         documents.max_seqlen, causal=True, deterministic=deterministic)
            return out.reshape(batch, seqlen, heads, head_dim)
        return dash_attention
    if attn == "sdpa":
        from torch.nn.attention import SDPBackend, sdpa_kernel
        backend = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION,
                   "efficient": SDPBackend.EFFICIENT_ATTENTION, "math": SDPBackend.MATH}[sdpa_backend]

        def sdpa_attention(q, k, v, documents: Documents | None = None):
            # Packed rows: SDPA has no varlen form, so the document structure goes in as a
            # dense boolean mask (which FlashAttention-2's backend refuses: any mask).
            mask = None if documents is None else documents.attention_mask()
            with sdpa_kernel([backend]):
                out = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                                     attn_mask=mask, is_causal=mask is None)
            return out.transpose(1, 2)
        return sdpa_attention
    raise ValueError(f"attn must be 'dash' or 'sdpa', got {attn!r}")


class Rotary(nn.Module):
    """Rotary position embedding on (batch, seqlen, heads, head_dim), computed in fp32."""

    def __init__(self, head_dim: int, max_seqlen: int, base: float):
        super().__init__()
        inv_freq = 1.0 / base ** (torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
        angles = torch.arange(max_seqlen, dtype=torch.float64)[:, None] * inv_freq[None, :]
        self.register_buffer("cos", angles.cos().float()[:, None, :], persistent=False)  # (S, 1, d/2)
        self.register_buffer("sin", angles.sin().float()[:, None, :], persistent=False)

    def forward(self, x: torch.Tensor, dtype: torch.dtype, positions: torch.Tensor | None = None) -> torch.Tensor:
        """positions: (batch, seqlen) position of every token (packed rows: restarting at 0
        in every document), else 0, 1, 2, ... in every row."""
        seqlen, half = x.shape[1], x.shape[-1] // 2
        if positions is None:
            cos, sin = self.cos[:seqlen], self.sin[:seqlen]  # (S, 1, d/2)
        else:
            cos, sin = self.cos[positions], self.sin[positions]  # (B, S, 1, d/2)
        x1, x2 = x[..., :half].float(), x[..., half:].float()
        return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1).to(dtype)


class SelfAttention(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.heads, self.head_dim = cfg.heads, cfg.head_dim
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model, bias=False)
        self.proj = nn.Linear(cfg.d_model, cfg.d_model, bias=False)
        self.attention = None  # set by GPT.set_attention (a plain function, not a module)

    def forward(self, x: torch.Tensor, rotary: Rotary, documents: Documents | None = None) -> torch.Tensor:
        batch, seqlen, _ = x.shape
        q, k, v = self.qkv(x).view(batch, seqlen, 3, self.heads, self.head_dim).unbind(dim=2)
        # q and k go through fp32 RoPE; all three reach attention in the compute dtype (bf16
        # under autocast, v's dtype): custom ops are not autocast.
        positions = None if documents is None else documents.positions
        q, k = rotary(q, v.dtype, positions), rotary(k, v.dtype, positions)
        # Fixed-length rows call attention(q, k, v) as before (bench_train_step.py's and any
        # other three-argument attention functions keep working).
        out = self.attention(q, k, v) if documents is None else self.attention(q, k, v, documents)
        return self.proj(out.reshape(batch, seqlen, self.heads * self.head_dim))


class MLP(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.up = nn.Linear(cfg.d_model, cfg.mlp_ratio * cfg.d_model, bias=False)
        self.down = nn.Linear(cfg.mlp_ratio * cfg.d_model, cfg.d_model, bias=False)

    def forward(self, x):
        return self.down(F.gelu(self.up(x), approximate="tanh"))


class Block(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.norm1 = nn.LayerNorm(cfg.d_model, bias=False)
        self.attn = SelfAttention(cfg)
        self.norm2 = nn.LayerNorm(cfg.d_model, bias=False)
        self.mlp = MLP(cfg)

    def forward(self, x, rotary, documents: Documents | None = None):
        x = x + self.attn(self.norm1(x), rotary, documents)
        return x + self.mlp(self.norm2(x))


class GPT(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        cfg.validate()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.layers))
        self.norm = nn.LayerNorm(cfg.d_model, bias=False)
        self.head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        self.rotary = Rotary(cfg.head_dim, cfg.seqlen, cfg.rope_base)

    @torch.no_grad()
    def init_weights(self, seed: int) -> None:
        """GPT-2 style init from its own CPU generator (independent of global RNG state and
        device): normal(0, 0.02), residual output projections scaled by 1/sqrt(2 layers),
        LayerNorm weights 1."""
        gen = torch.Generator().manual_seed(seed)
        for name, param in self.named_parameters():
            if param.dim() == 1:
                param.fill_(1.0)
                continue
            std = 0.02 / math.sqrt(2 * self.cfg.layers) if name.endswith(("attn.proj.weight", "mlp.down.weight")) \
                else 0.02
            cpu = torch.empty(param.shape, dtype=torch.float32)
            nn.init.normal_(cpu, std=std, generator=gen)
            param.copy_(cpu)

    def set_attention(self, attention) -> None:
        for block in self.blocks:
            block.attn.attention = attention

    def forward(self, tokens: torch.Tensor, targets: torch.Tensor | None = None, documents: Documents | None = None):
        """documents: packed rows (attention within documents, positions restarting); targets
        equal to IGNORE_INDEX do not count in the loss."""
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x, self.rotary, documents)
        logits = self.head(self.norm(x))
        if targets is None:
            return logits
        return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), targets.reshape(-1),
                               ignore_index=IGNORE_INDEX)


def default_sdpa_backend(device: torch.device, deterministic: bool, packed: bool = False) -> str:
    if device.type != "cuda":
        return "math"
    if packed:
        return "efficient"  # takes the document mask (FlashAttention-2 takes no mask at all)
    return "flash" if deterministic else "cudnn"


def build_model(cfg: GPTConfig, attn: str = "dash", deterministic: bool = False, device="cuda",
                sdpa_backend: str | None = None) -> GPT:
    """A freshly initialised GPT (same weights for the same cfg.seed) on `device`."""
    device = torch.device(device)
    model = GPT(cfg)
    model.init_weights(cfg.seed)
    model.to(device)
    model.set_attention(make_attention(attn, deterministic,
                                       sdpa_backend or default_sdpa_backend(device, deterministic, cfg.packed)))
    return model


def make_optimizer(model: GPT, cfg: GPTConfig) -> torch.optim.AdamW:
    """AdamW, weight decay on matrices only (not on LayerNorm weights)."""
    params = [p for _, p in sorted(model.named_parameters())]
    decay = [p for p in params if p.dim() >= 2]
    no_decay = [p for p in params if p.dim() < 2]
    return torch.optim.AdamW([dict(params=decay, weight_decay=cfg.weight_decay),
                              dict(params=no_decay, weight_decay=0.0)], lr=cfg.lr, betas=(0.9, 0.95), eps=1e-8)


def autocast_for(device: torch.device):
    if device.type == "cuda":
        return torch.autocast(device_type="cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()  # CPU smoke test: plain fp32


def train_step(model: GPT, optimizer: torch.optim.Optimizer, inputs: torch.Tensor, targets: torch.Tensor,
               grad_clip: float, documents: Documents | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Forward, backward, gradient clipping, optimizer step. Returns (loss, grad norm) as
    device tensors (no host synchronisation)."""
    with autocast_for(inputs.device):
        loss = model(inputs, targets, documents)
    loss.backward()
    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return loss.detach(), grad_norm


@torch.no_grad()
def evaluate(model: GPT, inputs: torch.Tensor, targets: torch.Tensor, copied: torch.Tensor) -> dict:
    """Held-out loss: overall, on tokens that continue a copied span (looking back at the
    earlier occurrence predicts them exactly; the chain only in part), and on the rest."""
    with autocast_for(inputs.device):
        logits = model(inputs)
    losses = F.cross_entropy(logits.float().view(-1, logits.shape[-1]), targets.reshape(-1),
                             reduction="none").view(targets.shape)
    mask = copied.float()
    return dict(loss=losses.mean().item(), copied=((losses * mask).sum() / mask.sum().clamp(min=1)).item(),
                rest=((losses * (1 - mask)).sum() / (1 - mask).sum().clamp(min=1)).item())


def weights_sha256(model: nn.Module) -> str:
    """SHA256 over every parameter (sorted by name): name, shape, dtype, then raw bytes."""
    digest = hashlib.sha256()
    for name, param in sorted(model.named_parameters()):
        tensor = param.detach().cpu().contiguous()
        digest.update(f"{name}:{tuple(tensor.shape)}:{tensor.dtype};".encode())
        digest.update(tensor.view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()


# --------------------------------------------------------------------------------------
# environment checks and determinism

def check_environment(attn: str, device: torch.device | str) -> str | None:
    """None if `attn` can run on `device` here, else a one-line reason."""
    device = torch.device(device)
    if device.type == "cuda":
        if not torch.cuda.is_available():
            return "CUDA is not available on this machine: this needs an NVIDIA GPU (dash: Hopper, sm90)"
    elif device.type != "cpu":
        return f"unsupported device {device}"
    if attn == "dash":
        if device.type != "cuda":
            return "--attn dash needs a CUDA device (an sm90 GPU)"
        try:
            import dash
        except Exception as err:  # noqa: BLE001 - report any import failure in one line
            return f"cannot import dash: {type(err).__name__}: {err}"
        if not dash.library_loaded:
            return "dash's op library is not built or does not load: run 'make build' in the repository"
        capability = torch.cuda.get_device_capability(device)
        if capability != (9, 0):
            return (f"dash's kernels need an sm90 (Hopper: H100/H200) GPU; this one "
                    f"({torch.cuda.get_device_name(device)}) is sm{capability[0]}{capability[1]}")
    return None


def require_environment(attn: str, device, hint: str = "") -> None:
    """Exit with a one-line message (no traceback) if `attn` cannot run on `device` here."""
    reason = check_environment(attn, device)
    if reason is not None:
        sys.exit(f"error: {reason}{hint}")


def set_cublas_workspace() -> None:
    """cuBLAS is only deterministic with a fixed workspace; the variable must be set before
    CUDA starts in this process (torch.use_deterministic_algorithms raises otherwise)."""
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", CUBLAS_WORKSPACE)


@contextlib.contextmanager
def determinism(enabled: bool, seed: int):
    """Seeds everything; with enabled=True also torch.use_deterministic_algorithms(True)
    for the duration (restored afterwards).

    The flag also makes torch fill every new tensor from torch.empty with NaN
    (torch.utils.deterministic.fill_uninitialized_memory), a guard against ops that read
    memory they never wrote. No op in this model does, and the fills cost ~10% of a step
    (measured on the H200, bench/RESULTS.md), so they are switched off: determinism comes
    from the algorithms, not from the fills."""
    previous = torch.are_deterministic_algorithms_enabled()
    previous_benchmark = torch.backends.cudnn.benchmark
    previous_fill = torch.utils.deterministic.fill_uninitialized_memory
    torch.manual_seed(seed)  # also seeds every CUDA device
    if enabled:
        set_cublas_workspace()
        torch.use_deterministic_algorithms(True)
        torch.utils.deterministic.fill_uninitialized_memory = False
        torch.backends.cudnn.benchmark = False
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(previous)
        torch.utils.deterministic.fill_uninitialized_memory = previous_fill
        torch.backends.cudnn.benchmark = previous_benchmark


# --------------------------------------------------------------------------------------
# training

def train(cfg: GPTConfig, attn: str = "dash", deterministic: bool = False, device="cuda",
          sdpa_backend: str | None = None, log_every: int = 10, log=print, eval_every: int = 50) -> dict:
    """Train a fresh model for cfg.steps steps, evaluating on a held-out batch every
    eval_every steps (0: never) and after the last; returns the record written to JSON."""
    device = torch.device(device)
    sdpa_backend = sdpa_backend or default_sdpa_backend(device, deterministic, cfg.packed)
    if cfg.packed and attn == "sdpa" and sdpa_backend == "flash":
        raise ValueError("packed rows need a document mask, which SDPA's flash backend does not take: "
                         "use --sdpa-backend efficient (default), cudnn or math")
    losses, grad_norms, lrs, step_ms, evals, documents_per_step = [], [], [], [], [], []
    with determinism(deterministic, cfg.seed):
        data = SyntheticLanguage(cfg)
        model = build_model(cfg, attn, deterministic, device, sdpa_backend)
        optimizer = make_optimizer(model, cfg)
        n_params = sum(p.numel() for p in model.parameters())
        label = f"{attn}{'' if attn == 'dash' else ' (' + sdpa_backend + ')'}, " \
                f"{'deterministic' if deterministic else 'non-deterministic'}{', packed' if cfg.packed else ''}"
        log(f"model: {cfg.layers} layers, d_model {cfg.d_model}, {cfg.heads} heads x {cfg.head_dim}, "
            f"{n_params / 1e6:.1f}M parameters; batch {cfg.batch_size} x seqlen {cfg.seqlen}; attention: {label}")
        if cfg.packed:
            low, high = cfg.doc_len_range
            log(f"packed rows: documents of {low}..{high} tokens (log-uniform), attention "
                f"{'flash_attn_varlen_func' if attn == 'dash' else 'SDPA with a document mask'}")
        log(f"data: uniform loss ln({cfg.vocab_size}) = {math.log(cfg.vocab_size):.3f}, "
            f"bigram floor {data.bigram_floor():.3f}")
        eval_inputs, eval_targets, eval_copied = data.eval_batch(device)
        start = time.perf_counter()
        for step in range(cfg.steps):
            documents = None
            if cfg.packed:
                inputs, targets, documents = data.packed_batch(step, device)
                documents_per_step.append(documents.count)
            else:
                inputs, targets = data.batch(step, device)
            lr = lr_at(step, cfg)
            for group in optimizer.param_groups:
                group["lr"] = lr
            t0 = time.perf_counter()
            loss, grad_norm = train_step(model, optimizer, inputs, targets, cfg.grad_clip, documents)
            loss_value, grad_norm_value = loss.item(), grad_norm.item()  # synchronises
            step_ms.append((time.perf_counter() - t0) * 1e3)
            losses.append(loss_value)
            grad_norms.append(grad_norm_value)
            lrs.append(lr)
            if step % log_every == 0 or step == cfg.steps - 1:
                log(f"step {step:5d}  loss {loss_value:.4f}  grad norm {grad_norm_value:.3f}  lr {lr:.2e}  "
                    f"{step_ms[-1]:.1f} ms" + (f"  {documents.count} documents" if documents is not None else ""))
            finite = math.isfinite(loss_value)
            if (eval_every and (step + 1) % eval_every == 0) or step == cfg.steps - 1 or not finite:
                evals.append(dict(step=step, **evaluate(model, eval_inputs, eval_targets, eval_copied)))
                log(f"  held-out after step {step}: loss {evals[-1]['loss']:.4f} (copied spans "
                    f"{evals[-1]['copied']:.4f}, the rest {evals[-1]['rest']:.4f})")
            if not finite:
                log(f"loss is {loss_value} at step {step}: stopping")
                break
        wall_s = time.perf_counter() - start
        digest = weights_sha256(model)
    timed = step_ms[TIMING_SKIP:] or step_ms
    median_ms = statistics.median(timed)
    log(f"final loss {losses[-1]:.4f}, median step {median_ms:.1f} ms "
        f"({cfg.batch_size * cfg.seqlen / median_ms * 1e3:,.0f} tokens/s), weights sha256 {digest[:16]}...")
    del model, optimizer
    return dict(
        attn=attn, deterministic=deterministic, sdpa_backend=sdpa_backend if attn == "sdpa" else None,
        label=label, config=dataclasses.asdict(cfg), parameters=n_params,
        device=str(device), device_name=torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
        torch=torch.__version__, cudnn=torch.backends.cudnn.version() if device.type == "cuda" else None,
        date=datetime.datetime.now().isoformat(timespec="seconds"),
        uniform_loss=math.log(cfg.vocab_size), bigram_floor=data.bigram_floor(),
        loss=losses, grad_norm=grad_norms, lr=lrs, step_ms=step_ms, eval=evals,
        documents_per_step=documents_per_step if cfg.packed else None,
        median_step_ms=median_ms, tokens_per_s=cfg.batch_size * cfg.seqlen / median_ms * 1e3,
        wall_s=wall_s, final_loss=losses[-1], weights_sha256=digest)


def plot_losses(curves: dict, path: pathlib.Path, title: str, uniform: float | None = None,
                floor: float | None = None, diff: tuple[str, list] | None = None,
                points: dict | None = None) -> bool:
    """Loss curves (label -> per-step losses) into a PNG, with optional marked points
    (label -> (steps, values), e.g. held-out losses) and an optional second panel with a
    per-step difference. Returns False (and says so) without matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot")
        return False
    panels = 2 if diff else 1
    fig, axes = plt.subplots(panels, 1, figsize=(8, 4.5 if panels == 1 else 7), squeeze=False,
                             sharex=True, gridspec_kw=dict(height_ratios=[3, 1.3][:panels]))
    ax = axes[0][0]
    styles = ["-", "--", ":", "-."]
    for i, (label, values) in enumerate(curves.items()):
        ax.plot(range(len(values)), values, styles[i % len(styles)], linewidth=1.2, label=label)
    for i, (label, (xs, ys)) in enumerate((points or {}).items()):
        ax.plot(xs, ys, "os^v"[i % 4] + "-", markersize=4, linewidth=0.8, label=label)
    if uniform is not None:
        ax.axhline(uniform, color="gray", linewidth=0.8, linestyle=":", label=f"uniform ln V = {uniform:.2f}")
    if floor is not None:
        ax.axhline(floor, color="black", linewidth=0.8, linestyle="--", label=f"bigram floor {floor:.2f}")
    ax.set_ylabel("training loss (nats/token)")
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    if diff:
        label, values = diff
        axes[1][0].plot(range(len(values)), values, linewidth=1.0, color="tab:red")
        axes[1][0].axhline(0.0, color="gray", linewidth=0.6)
        axes[1][0].set_ylabel(label, fontsize=8)
        axes[1][0].grid(alpha=0.3)
    axes[-1][0].set_xlabel("step")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def eval_points(result: dict) -> dict:
    """The held-out losses of a train() record, as plot_losses points."""
    steps = [e["step"] for e in result["eval"]]
    return {"held-out, copied spans": (steps, [e["copied"] for e in result["eval"]]),
            "held-out, the rest": (steps, [e["rest"] for e in result["eval"]])}


# --------------------------------------------------------------------------------------
# command line

def add_config_args(parser: argparse.ArgumentParser) -> None:
    """Model / data / optimiser options shared with check_bitwise.py and bench_train_step.py."""
    d = GPTConfig()
    group = parser.add_argument_group("model, data and optimiser")
    group.add_argument("--layers", type=int, default=d.layers)
    group.add_argument("--d-model", type=int, default=d.d_model)
    group.add_argument("--head-dim", type=int, default=d.head_dim, choices=[64, 128],
                       help="heads = d_model / head_dim (default %(default)s)")
    group.add_argument("--seqlen", type=int, default=d.seqlen)
    group.add_argument("--batch-size", type=int, default=d.batch_size)
    group.add_argument("--vocab-size", type=int, default=d.vocab_size)
    group.add_argument("--steps", type=int, default=d.steps)
    group.add_argument("--lr", type=float, default=d.lr, help="peak learning rate (default %(default)s)")
    group.add_argument("--warmup-steps", type=int, default=None, help="default: steps // 10")
    group.add_argument("--weight-decay", type=float, default=d.weight_decay)
    group.add_argument("--grad-clip", type=float, default=d.grad_clip)
    group.add_argument("--seed", type=int, default=d.seed)
    group.add_argument("--successors", type=int, default=d.successors, help="likely next tokens per token")
    group.add_argument("--noise", type=float, default=d.noise, help="probability of a uniformly random token")
    group.add_argument("--copy-len", type=int, default=d.copy_len, help="tokens per copied span (0: no copies)")
    group.add_argument("--copy-every", type=int, default=d.copy_every, help="one copied span per this many tokens")


def add_packing_args(parser: argparse.ArgumentParser) -> None:
    """--packed and its document lengths (train_gpt.py and check_bitwise.py: the scripts whose
    training loop passes the documents on; bench_train_step.py's does not)."""
    d = GPTConfig()
    group = parser.add_argument_group("packed rows")
    group.add_argument("--packed", action="store_true",
                       help="rows of documents packed back to back: dash flash_attn_varlen_func, sdpa a document mask")
    group.add_argument("--min-doc-len", type=int, default=d.min_doc_len, help="default %(default)s")
    group.add_argument("--max-doc-len", type=int, default=None, help="default: seqlen")


def config_from_args(args: argparse.Namespace) -> GPTConfig:
    cfg = GPTConfig(layers=args.layers, d_model=args.d_model, head_dim=args.head_dim, seqlen=args.seqlen,
                    batch_size=args.batch_size, vocab_size=args.vocab_size, steps=args.steps, lr=args.lr,
                    warmup_steps=args.warmup_steps, weight_decay=args.weight_decay, grad_clip=args.grad_clip,
                    seed=args.seed, successors=args.successors, noise=args.noise, copy_len=args.copy_len,
                    copy_every=args.copy_every, packed=getattr(args, "packed", False),
                    min_doc_len=getattr(args, "min_doc_len", GPTConfig.min_doc_len),
                    max_doc_len=getattr(args, "max_doc_len", None))
    try:
        cfg.validate()
    except ValueError as err:
        sys.exit(f"error: {err}")
    return cfg


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--attn", choices=["dash", "sdpa"], default="dash")
    parser.add_argument("--deterministic", action="store_true",
                        help="seeds, CUBLAS_WORKSPACE_CONFIG, torch.use_deterministic_algorithms(True), "
                             "flash_attn_func(deterministic=True)")
    parser.add_argument("--sdpa-backend", choices=SDPA_BACKENDS, default=None,
                        help="for --attn sdpa: default cudnn, or flash with --deterministic; efficient with --packed")
    parser.add_argument("--out", type=pathlib.Path, default=ROOT / "examples" / "out")
    parser.add_argument("--log-every", type=int, default=10)
    parser.add_argument("--eval-every", type=int, default=50,
                        help="held-out evaluation (loss on copied spans / the rest) every N steps; 0: only at the end")
    parser.add_argument("--device", default="cuda", help=argparse.SUPPRESS)  # "cpu": smoke test, fp32, sdpa math
    add_config_args(parser)
    add_packing_args(parser)
    return parser.parse_args(argv)


def main(argv=None) -> None:
    args = parse_args(argv)
    if args.deterministic:
        set_cublas_workspace()  # before anything touches CUDA
    require_environment(args.attn, args.device, hint=" (a CPU smoke test of the model: --device cpu --attn sdpa)")
    cfg = config_from_args(args)
    if cfg.packed and args.attn == "sdpa" and args.sdpa_backend == "flash":
        sys.exit("error: --packed needs a document mask, which SDPA's flash backend does not take "
                 "(use efficient, the default, cudnn or math)")
    result = train(cfg, args.attn, args.deterministic, args.device, args.sdpa_backend, args.log_every,
                   eval_every=args.eval_every)
    result["command"] = " ".join(sys.argv)
    args.out.mkdir(parents=True, exist_ok=True)
    stem = f"train_gpt_{args.attn}_{'det' if args.deterministic else 'nondet'}{'_packed' if cfg.packed else ''}"
    (args.out / f"{stem}.json").write_text(json.dumps(result, indent=1))
    print(f"wrote {args.out / (stem + '.json')}")
    title = (f"GPT {cfg.layers}x{cfg.d_model}, seqlen {cfg.seqlen}{' packed' if cfg.packed else ''}, "
             f"batch {cfg.batch_size}: {result['label']}\n"
             f"{result['device_name']}, final loss {result['final_loss']:.4f}")
    if plot_losses({result["label"]: result["loss"]}, args.out / f"{stem}.png", title,
                   uniform=result["uniform_loss"], floor=result["bigram_floor"], points=eval_points(result)):
        print(f"wrote {args.out / (stem + '.png')}")


if __name__ == "__main__":
    main()
