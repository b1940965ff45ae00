"""Python mirror of csrc/kernels/schedule.h: which tasks a persistent CTA runs, the order
in which each task (KV tile) visits its Q tiles, and each dQ tile's fixed accumulation
order. Runs on the CPU; tests compare it with the kernel's recorded accumulation order.

Keep this file and schedule.h in lockstep: same names, same formulas.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BwdTask:
    n_block: int
    head: int
    batch: int


@dataclass(frozen=True)
class BwdScheduleView:
    num_m_blocks: int
    num_n_blocks: int
    heads: int
    batch: int
    seqlen_q: int
    seqlen_k: int
    block_m: int
    block_n: int
    causal: bool

    @staticmethod
    def for_problem(batch: int, heads: int, seqlen_q: int, seqlen_k: int, block_m: int, block_n: int,
                    causal: bool) -> "BwdScheduleView":
        return BwdScheduleView(-(-seqlen_q // block_m), -(-seqlen_k // block_n), heads, batch,
                               seqlen_q, seqlen_k, block_m, block_n, causal)

    def num_tasks(self) -> int:
        return self.num_n_blocks * self.heads * self.batch

    def task(self, t: int) -> BwdTask:
        bh, n_block = divmod(t, self.num_n_blocks)
        batch, head = divmod(bh, self.heads)
        return BwdTask(n_block, head, batch)

    def m_block_begin(self, n_block: int) -> int:
        if not self.causal:
            return 0
        first_query = n_block * self.block_n - (self.seqlen_k - self.seqlen_q)
        return 0 if first_query <= 0 else first_query // self.block_m

    def num_steps(self, task: BwdTask) -> int:
        return max(self.num_m_blocks - self.m_block_begin(task.n_block), 0)

    def q_tile_at(self, task: BwdTask, step: int) -> int:
        return self.m_block_begin(task.n_block) + step

    def dq_rank(self, task: BwdTask, m_block: int) -> int:
        return task.n_block

    def dq_tile_index(self, task: BwdTask, m_block: int) -> int:
        return (task.batch * self.heads + task.head) * self.num_m_blocks + m_block


def dq_accumulation_orders(view: BwdScheduleView) -> dict[tuple[int, int, int], list[int]]:
    """For every dQ tile (batch, head, m_block) that receives partials: the KV tiles in
    the order the deterministic schedule adds them (sorted by rank)."""
    ranked: dict[tuple[int, int, int], list[tuple[int, int]]] = {}
    for t in range(view.num_tasks()):
        task = view.task(t)
        for step in range(view.num_steps(task)):
            m = view.q_tile_at(task, step)
            ranked.setdefault((task.batch, task.head, m), []).append((view.dq_rank(task, m), task.n_block))
    orders = {}
    for tile, pairs in ranked.items():
        ranks = sorted(r for r, _ in pairs)
        if ranks != list(range(len(pairs))):
            raise AssertionError(f"dQ tile {tile}: ranks {ranks} are not 0..{len(pairs) - 1}")
        orders[tile] = [n for _, n in sorted(pairs)]
    return orders
