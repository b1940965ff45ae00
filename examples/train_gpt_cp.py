"""Train the example GPT (examples/train_gpt.py) with context parallelism: every rank holds
1 / P of each sequence's tokens, and attention goes through dash.distributed (Ulysses
all-to-all or ring with the zigzag layout). The weights are replicated; after each backward
the gradients (one flat fp32 buffer) are averaged over the ranks: with --deterministic every
rank gathers all ranks' buffers and adds them in rank order, so the bits depend on neither the
collective's algorithm nor the topology, and P ranks sharing one GPU (--backend gloo, its
collectives through host memory) compute what P GPUs compute: a bitwise reference for a
multi-GPU run that needs one GPU.

  torchrun --nproc-per-node 2 examples/train_gpt_cp.py --cp ulysses --deterministic --steps 100
  torchrun --nproc-per-node 2 examples/train_gpt_cp.py --cp ring --deterministic --steps 100 --out out/ring
  torchrun --nproc-per-node 2 examples/train_gpt_cp.py --steps 5 --seqlen 512 --layers 1   # smoke test
  torchrun --nproc-per-node 2 examples/train_gpt_cp.py --cp ulysses --deterministic --backend gloo  # 2 ranks, 1 GPU

Rank r's tokens: Ulysses rows r * S / P .. (r + 1) * S / P of every sequence; ring (causal)
chunks r and 2P - 1 - r of 2P (dash.distributed.zigzag_shard), so every rank has the same
attention work. RoPE takes each token's position in the whole sequence. The loss is each
rank's mean over its tokens, averaged over the ranks (the whole batch's mean: every rank
holds as many tokens). Two runs with --deterministic on the same world size give the same
losses and weights bit for bit (compare the weights_sha256 of the JSON files); the losses
track the one-GPU run (train_gpt.py) within rounding: attention's own outputs and input
gradients are the one-GPU call's bits under Ulysses, but the weight gradients are sums over
tokens split across the ranks, added in another order.

Writes <out>/train_gpt_cp_<cp>.json on rank 0 (losses, step times, the weights' SHA256).
"""
from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import os
import pathlib
import statistics
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import train_gpt as tg  # noqa: E402

tg.set_cublas_workspace()  # before CUDA starts: the deterministic runs need it

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

from dash import distributed as ddist  # noqa: E402


class RowPositions:
    """What the GPT's attention layers read from a `documents` argument: each token's position
    (for RoPE); the CP attention ignores the rest."""

    def __init__(self, positions: torch.Tensor):
        self.positions = positions


def shard(x: torch.Tensor, cp: str, rank: int, world: int) -> torch.Tensor:
    """This rank's tokens of (batch, seqlen, ...) x."""
    if cp == "ring":
        return ddist.zigzag_shard(x, rank, world, dim=1)
    return x.chunk(world, dim=1)[rank]


def make_cp_attention(cp: str, deterministic: bool, group=None, sm_margin: int = 0):
    """sm_margin (ring): SMs the attention kernels leave to the K / V transfers they overlap."""
    def attention(q, k, v, documents=None):
        if cp == "ulysses":
            return ddist.ulysses_attention(q, k, v, causal=True, group=group, deterministic=deterministic)
        return ddist.ring_attention(q, k, v, causal=True, group=group, deterministic=deterministic,
                                    sm_margin=sm_margin)
    return attention


def rank_mean(flat: torch.Tensor, world: int, ordered: bool, group=None) -> torch.Tensor:
    """The ranks' mean of `flat` (fp32). ordered: every rank gathers all ranks' tensors and adds
    them in rank order, so the bits depend on neither the collective's algorithm nor the
    machine's topology (P ranks on one GPU give what P GPUs give); else one all_reduce. gloo
    moves host tensors only: CUDA tensors go through host memory there."""
    staged = dist.get_backend(group) == "gloo" and flat.is_cuda
    src = flat.cpu() if staged else flat
    if ordered:
        parts = [torch.empty_like(src) for _ in range(world)]
        dist.all_gather(parts, src, group=group)
        total = parts[0].clone()
        for part in parts[1:]:
            total += part
    else:
        total = src.clone()
        dist.all_reduce(total, group=group)
    return (total / world).to(flat.device)


def autocast(device: torch.device):
    # bf16 on the CPU too (the smoke test): dash's ops take bf16 / fp16 only.
    return torch.autocast(device_type=device.type, dtype=torch.bfloat16)


def train_cp(cfg: tg.GPTConfig, cp: str, deterministic: bool, device, log=print, log_every: int = 10,
             group=None, sm_margin: int = 0, ordered_grads: bool | None = None) -> dict:
    """ordered_grads (default: deterministic): the gradients' mean over the ranks added in rank
    order (rank_mean)."""
    if ordered_grads is None:
        ordered_grads = deterministic
    device = torch.device(device)
    rank, world = dist.get_rank(group), dist.get_world_size(group)
    if cfg.seqlen % (2 * world):
        raise ValueError(f"seqlen {cfg.seqlen} must be a multiple of 2 x {world} ranks")
    losses, step_ms = [], []
    with tg.determinism(deterministic, cfg.seed):
        data = tg.SyntheticLanguage(cfg)
        model = tg.build_model(cfg, "sdpa", deterministic, device, sdpa_backend="math")  # weights only
        model.set_attention(make_cp_attention(cp, deterministic, group, sm_margin))
        optimizer = tg.make_optimizer(model, cfg)
        params = [p for _, p in sorted(model.named_parameters())]
        positions = torch.arange(cfg.seqlen, device=device).expand(cfg.batch_size, -1)
        rows = RowPositions(shard(positions, cp, rank, world))
        log(f"context parallel: {cp}, {world} ranks, {cfg.seqlen // world} tokens of each sequence a rank; "
            f"{cfg.layers} layers, d_model {cfg.d_model}, {cfg.heads} heads x {cfg.head_dim}")
        for step in range(cfg.steps):
            inputs, targets = data.batch(step, device)
            lr = tg.lr_at(step, cfg)
            for g in optimizer.param_groups:
                g["lr"] = lr
            t0 = time.perf_counter()
            with autocast(device):
                loss = model(shard(inputs, cp, rank, world), shard(targets, cp, rank, world), documents=rows)
            loss.backward()
            flat = rank_mean(torch.cat([p.grad.reshape(-1).float() for p in params]), world, ordered_grads,
                                 group)
            offset = 0
            for p in params:
                p.grad.copy_(flat[offset:offset + p.numel()].view_as(p.grad))
                offset += p.numel()
            grad_norm = torch.nn.utils.clip_grad_norm_(params, cfg.grad_clip)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            loss_value = rank_mean(loss.detach().float().reshape(1), world, True, group).item()  # synchronises
            step_ms.append((time.perf_counter() - t0) * 1e3)
            losses.append(loss_value)
            if step % log_every == 0 or step == cfg.steps - 1:
                log(f"step {step:5d}  loss {loss_value:.4f}  grad norm {grad_norm.item():.3f}  {step_ms[-1]:.1f} ms")
        digest = tg.weights_sha256(model)
    timed = step_ms[tg.TIMING_SKIP:] or step_ms
    return dict(cp=cp, world=world, deterministic=deterministic, sm_margin=sm_margin, ordered_grads=ordered_grads,
                backend=dist.get_backend(group), config=dataclasses.asdict(cfg), device=str(device),
                torch=torch.__version__, date=datetime.datetime.now().isoformat(timespec="seconds"),
                loss=losses, step_ms=step_ms, median_step_ms=statistics.median(timed), weights_sha256=digest)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cp", choices=["ulysses", "ring"], default="ulysses")
    parser.add_argument("--deterministic", action="store_true")
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--seqlen", type=int, default=4096)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--d-model", type=int, default=1024)
    parser.add_argument("--head-dim", type=int, default=128)
    parser.add_argument("--log-every", type=int, default=10)
    parser.add_argument("--sm-margin", type=int, default=0, help="ring: SMs left to the overlapped K / V transfers")
    parser.add_argument("--device", default=None, help="cuda (default when available) or cpu")
    parser.add_argument("--backend", default=None, choices=["nccl", "gloo"],
                        help="default: nccl on cuda, gloo on cpu; gloo on cuda lets several ranks share one GPU "
                             "(collectives through host memory)")
    parser.add_argument("--grad-sum", default=None, choices=["ordered", "all_reduce"],
                        help="default: ordered with --deterministic (gradients gathered and added in rank order)")
    parser.add_argument("--out", default="out")
    args = parser.parse_args(argv)
    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    if not dist.is_initialized():
        dist.init_process_group(args.backend or ("nccl" if device == "cuda" else "gloo"))
    rank = dist.get_rank()
    if device == "cuda":
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank)) % torch.cuda.device_count())
        device = f"cuda:{torch.cuda.current_device()}"
    cfg = tg.GPTConfig(steps=args.steps, seqlen=args.seqlen, batch_size=args.batch_size, layers=args.layers,
                       d_model=args.d_model, head_dim=args.head_dim)
    result = train_cp(cfg, args.cp, args.deterministic, device, log=(print if rank == 0 else lambda *_: None),
                      log_every=args.log_every, sm_margin=args.sm_margin,
                      ordered_grads=None if args.grad_sum is None else args.grad_sum == "ordered")
    if rank == 0:
        out = pathlib.Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        path = out / f"train_gpt_cp_{args.cp}.json"
        path.write_text(json.dumps(result, indent=1))
        print(f"final loss {result['loss'][-1]:.4f}, median step {result['median_step_ms']:.1f} ms, "
              f"weights sha256 {result['weights_sha256'][:16]}...; wrote {path}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
