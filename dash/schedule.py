"""Python mirror of csrc/kernels/schedule.h: which tasks each persistent CTA runs, the
order in which a task (KV tile) visits its Q tiles, and each dQ tile's fixed
accumulation order. Runs on the CPU; tests compare it with the kernel's recorded
accumulation order and check its deadlock freedom.

Keep this file and schedule.h in lockstep: same names, same formulas.
"""
from __future__ import annotations

from dataclasses import dataclass

ASCENDING = "ascending"
SHIFT = "shift"
SCHEDULES = (ASCENDING, SHIFT)


@dataclass(frozen=True)
class BwdTask:
    id: int
    n_block: int
    head: int
    batch: int


@dataclass(frozen=True)
class ShiftGroup:
    first: int
    size: int


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
    schedule: str
    grid: int

    @staticmethod
    def for_problem(batch: int, heads: int, seqlen_q: int, seqlen_k: int, block_m: int, block_n: int,
                    causal: bool, schedule: str = ASCENDING, grid: int = 132) -> "BwdScheduleView":
        assert schedule in SCHEDULES
        num_m, num_n = -(-seqlen_q // block_m), -(-seqlen_k // block_n)
        grid = min(grid, num_n * heads * batch)
        return BwdScheduleView(num_m, num_n, heads, batch, seqlen_q, seqlen_k, block_m, block_n, causal,
                               schedule, grid)

    def num_tasks(self) -> int:
        return self.num_n_blocks * self.heads * self.batch

    def num_rounds(self) -> int:
        return -(-self.num_tasks() // self.grid)

    def task_id(self, cta: int, round_: int) -> int:
        slot = cta if round_ % 2 == 0 else self.grid - 1 - cta
        t = round_ * self.grid + slot
        return t if t < self.num_tasks() else -1

    def task(self, t: int) -> BwdTask:
        if self.causal:
            n_block, bh = divmod(t, self.heads * self.batch)
        else:
            bh, n_block = divmod(t, self.num_n_blocks)
        batch, head = divmod(bh, self.heads)
        return BwdTask(t, n_block, head, batch)

    def m_block_begin(self, n_block: int) -> int:
        if not self.causal:
            return 0
        first_query = n_block * self.block_n - (self.seqlen_k - self.seqlen_q)
        return 0 if first_query <= 0 else first_query // self.block_m

    def num_steps(self, task: BwdTask) -> int:
        return max(self.num_m_blocks - self.m_block_begin(task.n_block), 0)

    def shift_group(self, task: BwdTask) -> ShiftGroup:
        head_first_task = task.id - task.n_block
        round_begin = (task.id // self.grid) * self.grid
        round_end = round_begin + self.grid
        first = max(round_begin - head_first_task, 0)
        end = min(round_end - head_first_task, self.num_n_blocks)
        return ShiftGroup(first, end - first)

    def first_q_tile(self, task: BwdTask) -> int:
        if self.schedule == SHIFT:
            return task.n_block - self.shift_group(task).first
        return self.m_block_begin(task.n_block)

    def next_q_tile(self, m_block: int) -> int:
        return m_block + 1 if m_block + 1 < self.num_m_blocks else 0

    def q_tile_at(self, task: BwdTask, step: int) -> int:
        return (self.first_q_tile(task) + step) % self.num_m_blocks

    def dq_rank(self, task: BwdTask, m_block: int) -> int:
        if self.schedule == SHIFT:
            g = self.shift_group(task)
            s = task.n_block - g.first
            return g.first + (min(m_block, g.size - 1) - s) % g.size
        return task.n_block

    def dq_tile_index(self, task: BwdTask, m_block: int) -> int:
        return (task.batch * self.heads + task.head) * self.num_m_blocks + m_block


def shift_applies(view: BwdScheduleView) -> bool:
    return not view.causal and view.num_m_blocks >= min(view.num_n_blocks, view.grid)


def cta_programs(view: BwdScheduleView) -> list[list[BwdTask]]:
    """The tasks each CTA runs, in order."""
    return [[view.task(t) for r in range(view.num_rounds()) if (t := view.task_id(c, r)) >= 0]
            for c in range(view.grid)]


def dq_accumulation_orders(view: BwdScheduleView) -> dict[tuple[int, int, int], list[int]]:
    """For every dQ tile (batch, head, m_block) that receives partials: the KV tiles in
    the order the deterministic schedule adds them (sorted by rank). Checks that the
    ranks of each tile are exactly 0..k-1."""
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
