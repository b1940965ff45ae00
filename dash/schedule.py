"""Python mirror of csrc/kernels/bwd/schedule.h: which tasks each persistent CTA runs, the
order in which a task (KV tile) visits its Q tiles, and each dQ tile's fixed
accumulation order. Runs on the CPU; tests compare it with the kernel's definition
(compiled for the host) and with the kernel's recorded accumulation order.

Keep this file and schedule.h in lockstep: same names, same formulas. The mask's tile
ranges come from dash/geometry.py (csrc/kernels/common/mask.h). The simulation of the
schedules (makespan, stalls, Gantt charts) lives in dash/schedule_sim.py.

GQA / MQA: tasks are KV tiles of a K/V head; each Q tile of a task's walk is `group`
consecutive steps, one per query head of the group (heads fastest), with that Q tile's rank.

Packed (variable-length) batches: items are numbered through the dense VarlenTiles table and
drawn from a counter in item order (here: the static dealing of cta_programs, one of its
possible orders); every task carries its own sequence's tiles. Banded masks (causal or a
sliding window): diagonal (tasks walk up from their first Q tile; dQ tile m adds from KV tile
n_block_end(m) - 1 back to n_block_begin(m)), over sequence-major numbering; full masks:
ascending (sequence-tile-major when deterministic).

Masks are bands (dash.geometry.MaskWindow, FlashAttention-3's window_size); where a function
took `causal: bool` it takes that flag or a MaskWindow.
"""
from __future__ import annotations

from dataclasses import dataclass

from . import _traits
from .geometry import (SEQUENCE_MAJOR, SEQUENCE_TILE_MAJOR, MaskWindow, SeqGeometry, SeqTiles, VarlenTiles,
                       as_mask_window, normalized_mask_window, seq_tiles)

ASCENDING = "ascending"
SHIFT = "shift"
DESCENDING = "descending"
SYMMETRIC_SHIFT = "symmetric_shift"
FA3_BASELINE = "fa3_baseline"
DIAGONAL = "diagonal"
SCHEDULES = (ASCENDING, SHIFT, DESCENDING, SYMMETRIC_SHIFT, FA3_BASELINE, DIAGONAL)
SCHEDULE_IDS = {ASCENDING: 0, SHIFT: 1, DESCENDING: 2, SYMMETRIC_SHIFT: 3, FA3_BASELINE: 4,
                DIAGONAL: 5}  # BwdSchedule in C++


@dataclass(frozen=True)
class BwdTask:
    item: int
    member: int
    n_block: int
    kv_head: int
    batch: int
    tiles: SeqTiles | None = None  # the task's sequence under the mask
    part: int = 0                  # slice of the K/V head's query-head group it walks (split groups)


@dataclass(frozen=True)
class ItemGroup:
    first: int
    size: int


@dataclass(frozen=True)
class QWalk:
    base: int
    offset: int
    period: int
    jump_step: int
    jump_to: int
    dir: int

    def at(self, step: int) -> int:
        if step < self.jump_step:
            return self.base + (self.offset + step) % self.period
        return self.jump_to + self.dir * (step - self.jump_step)

    def next(self, m_block: int, step: int) -> int:
        """at(step + 1) from m_block = at(step), as the kernel's producer steps its walks."""
        following = step + 1
        if following < self.jump_step:
            return self.base if m_block + 1 == self.base + self.period else m_block + 1
        return self.jump_to if following == self.jump_step else m_block + self.dir


@dataclass(frozen=True)
class TaskRanks:
    schedule: str
    n_block: int
    member: int
    first: int
    size: int
    local: int
    sigma: int
    rho: int
    num_n_blocks: int
    tiles: SeqTiles | None = None  # the task's sequence under the mask

    def at(self, m_block: int) -> int:
        if self.schedule == DIAGONAL:
            return self.tiles.n_block_end(m_block) - 1 - self.n_block
        if self.schedule == SHIFT:
            return self.first + (min(m_block, self.size - 1) - self.local) % self.size
        if self.schedule == SYMMETRIC_SHIFT:
            visible = m_block // self.sigma + 1
            early_long = min(visible, self.first)
            early_short = max(min(visible, self.num_n_blocks) - (self.num_n_blocks - self.first), 0)
            earlier = early_long + early_short
            if self.member == 1:
                return earlier + self.size + (self.size - 1 - self.local)
            if m_block >= self.rho:
                return earlier + (min(m_block - self.rho, self.size - 1) - self.local) % self.size
            return earlier + (m_block // self.sigma - self.first) - self.local
        return self.n_block - self.tiles.n_block_begin(m_block)  # KV tiles n_block_begin(m), ..., n_block_end(m) - 1


@dataclass(frozen=True)
class BwdScheduleView:
    num_m_blocks: int
    num_n_blocks: int
    heads: int     # query heads
    heads_kv: int  # K/V heads (tasks are per K/V head)
    batch: int
    seqlen_q: int
    seqlen_k: int
    block_m: int
    block_n: int
    mask: MaskWindow                      # the call's band (also takes the older causal flag)
    schedule: str
    grid: int
    geo: SeqGeometry | None = None        # packed calls: the geometry (fixed: derived)
    varlen: VarlenTiles | None = None     # packed calls: the dense item table
    parts: int = 1                        # tasks each query-head group is split over
    chunk: int = 1                        # fixed-length ascending: walks per dealing chunk
    tail_cap: int = -1                    # diagonal's tail at most this many items (diagonal_tail_cap; < 0: no cap)

    def __post_init__(self):
        object.__setattr__(self, "mask", as_mask_window(self.mask))

    @staticmethod
    def for_varlen(heads: int, heads_kv: int, cu_seqlens_q, cu_seqlens_k, block_m: int, block_n: int,
                   mask: MaskWindow | bool, schedule: str = ASCENDING, grid: int = 132, seqused_q=None,
                   seqused_k=None, deterministic: bool = True, parts: int = 1) -> "BwdScheduleView":
        """A packed call's view. The kernel deals its items dynamically (a counter), so the
        static dealing of cta_programs is one of its possible orders; the dQ order does not
        depend on it. The item numbering follows the schedule and mode (bwd_varlen_order).
        The mask is normalized as the op does (make_mask_window, against the longest sequences)."""
        assert schedule in (ASCENDING, DESCENDING, DIAGONAL)
        lens_q = [b - a for a, b in zip(cu_seqlens_q, cu_seqlens_q[1:])]
        lens_k = [b - a for a, b in zip(cu_seqlens_k, cu_seqlens_k[1:])]
        max_q, max_k = max(lens_q, default=0), max(lens_k, default=0)
        geo = SeqGeometry.packed(heads, heads_kv, cu_seqlens_q, cu_seqlens_k, max_q, max_k, block_m, seqused_q,
                                 seqused_k)
        num_m, num_n = -(-max_q // block_m), -(-max_k // block_n)
        window = normalized_mask_window(mask, max_q, max_k)
        varlen = VarlenTiles.build(geo, block_n, True, num_n, heads_kv * parts,
                                   numbering=bwd_varlen_order(schedule, deterministic))
        return BwdScheduleView(num_m, num_n, heads, heads_kv, geo.batch, max_q, max_k, block_m, block_n, window,
                               schedule, grid, geo, varlen, parts)

    def packed(self) -> bool:
        return self.varlen is not None

    def counter_dealt(self) -> bool:
        """Items drawn from a counter in item order (schedule.h counter_dealt_schedule); the
        static dealing of cta_programs is then one of the kernel's possible orders."""
        return counter_dealt_schedule(self.schedule, self.packed())

    def geometry(self) -> SeqGeometry:
        if self.geo is not None:
            return self.geo
        return SeqGeometry.fixed(self.batch, self.heads, self.heads_kv, self.seqlen_q, self.seqlen_k, self.block_m)

    @staticmethod
    def for_problem(batch: int, heads: int, seqlen_q: int, seqlen_k: int, block_m: int, block_n: int,
                    mask: MaskWindow | bool, schedule: str = ASCENDING, grid: int = 132,
                    heads_kv: int | None = None, parts: int = 1, chunk: int = 1) -> "BwdScheduleView":
        """A view with the grid capped at the number of work items, as the planner does, and
        the mask normalized as the op does (make_mask_window: a window wider than the
        sequence is no window)."""
        assert schedule in SCHEDULES
        heads_kv = heads if heads_kv is None else heads_kv
        assert heads % heads_kv == 0 and (heads // heads_kv) % parts == 0
        num_m, num_n = -(-seqlen_q // block_m), -(-seqlen_k // block_n)
        window = normalized_mask_window(mask, seqlen_q, seqlen_k)
        view = BwdScheduleView(num_m, num_n, heads, heads_kv, batch, seqlen_q, seqlen_k, block_m, block_n, window,
                               schedule, grid, parts=parts, chunk=chunk)
        return BwdScheduleView(num_m, num_n, heads, heads_kv, batch, seqlen_q, seqlen_k, block_m, block_n, window,
                               schedule, max(1, min(grid, view.num_items())), parts=parts, chunk=chunk)

    def paired(self) -> bool:
        return self.schedule == SYMMETRIC_SHIFT

    def members(self) -> int:
        return 2 if self.paired() else 1

    def items_per_head(self) -> int:
        return self.num_n_blocks // 2 if self.paired() else self.num_n_blocks

    def num_items(self) -> int:
        if self.packed():
            return self.varlen.num_items
        return self.items_per_head() * self.units() * self.batch

    def units(self) -> int:
        """What items are dealt per, as heads: K/V heads, or parts of their groups."""
        return self.heads_kv * self.parts

    def group(self) -> int:
        """Query heads per task."""
        return self.heads // self.units()

    def num_rounds(self) -> int:
        return -(-self.num_items() // self.grid)

    def sigma(self) -> int:
        return self.block_n // self.block_m

    def longest_first(self) -> bool:
        """Banded descending deals the longest tasks first in static rounds (KV tile slowest,
        all heads together); banded ascending does so from a counter, in chunks of walks (task);
        fa3_baseline keeps FlashAttention-3's order."""
        return not self.mask.full() and self.schedule == DESCENDING

    def last_tile_first(self) -> bool:
        """Diagonal (fixed length): a head's items consecutive, its last KV tile first, so each
        wait (on KV tile n + 1) targets a smaller item and a round's tasks share few heads' rows."""
        return self.schedule == DIAGONAL

    def tail_items(self) -> int:
        """schedule.h's tail_items: diagonal's (fixed length) last items that the kernel may deal
        longest first (bwd/producer.h says when), fewer than the grid's CTAs, none of the
        first grid (those are drawn as the CTAs start) and at most tail_cap (the planner's
        diagonal_tail_cap) where that is set."""
        if self.schedule != DIAGONAL or self.packed():
            return 0
        items = max(0, min(self.grid - 1, self.num_items() - self.grid))
        return min(items, self.tail_cap) if self.tail_cap >= 0 else items

    def tail_item(self, drawn: int) -> int:
        """schedule.h's tail_item: the item dealt as the tail's `drawn`-th counter value (each
        head's items in the tail, in reverse: its longest walks first)."""
        first = self.num_items() - self.tail_items()
        head_begin = drawn // self.items_per_head() * self.items_per_head()
        lo = max(head_begin, first)
        return lo + head_begin + self.items_per_head() - 1 - drawn

    def item_id(self, cta: int, round_: int) -> int:
        snake = self.longest_first()
        slot = self.grid - 1 - cta if snake and round_ % 2 == 1 else cta
        item = round_ * self.grid + slot
        return item if item < self.num_items() else -1

    def task(self, item: int, member: int) -> BwdTask:
        if self.packed():
            v = self.varlen.locate(item)
            kv_head, part = divmod(v.unit, self.parts)
            return BwdTask(item, member, v.tile, kv_head, v.batch,
                           seq_tiles(self.geo.seq(v.batch), self.block_m, self.block_n, self.mask), part)
        if self.schedule == ASCENDING:
            walks = self.units() * self.batch  # chunks of walks, KV tile by KV tile, walks fastest
            width_max = self.chunk if 1 <= self.chunk < walks else walks
            index, rest = divmod(item, width_max * self.num_n_blocks)
            first = index * width_max
            width = min(walks - first, width_max)
            n_block, within = divmod(rest, width)
            bh = first + within
        elif self.longest_first():
            n_block, bh = divmod(item, self.units() * self.batch)
        else:
            bh, p = divmod(item, self.items_per_head())
            n_block = p if member == 0 and not self.last_tile_first() else self.num_n_blocks - 1 - p
        batch, unit = divmod(bh, self.units())
        kv_head, part = divmod(unit, self.parts)
        return BwdTask(item, member, n_block, kv_head, batch, self.tiles(), part)

    def tiles(self) -> SeqTiles:
        return SeqTiles(self.seqlen_q, self.seqlen_k, self.block_m, self.block_n, self.mask)

    def m_block_begin(self, n_block: int) -> int:
        return self.tiles().m_block_begin(n_block)

    def num_q_tiles(self, task: BwdTask) -> int:
        """Q tiles with a query that sees a key of the task's KV tile."""
        return max(task.tiles.m_block_end(task.n_block) - task.tiles.m_block_begin(task.n_block), 0)

    def num_steps(self, task: BwdTask) -> int:
        return self.num_q_tiles(task) * self.group()

    def q_head(self, task: BwdTask, sub: int) -> int:
        return (task.kv_head * self.parts + task.part) * self.group() + sub

    def item_group(self, task: BwdTask) -> ItemGroup:
        local_item = task.item % self.items_per_head()
        head_first_item = task.item - local_item
        round_begin = (task.item // self.grid) * self.grid
        round_end = round_begin + self.grid
        first = max(round_begin - head_first_item, 0)
        end = min(round_end - head_first_item, self.items_per_head())
        return ItemGroup(first, end - first)

    def rectangle_begin(self, group: ItemGroup) -> int:
        return self.sigma() * (group.first + group.size - 1)

    def q_walk(self, task: BwdTask) -> QWalk:
        m_total = task.tiles.num_m_blocks()
        if self.schedule in (ASCENDING, FA3_BASELINE, DIAGONAL):
            return QWalk(task.tiles.m_block_begin(task.n_block), 0, m_total, m_total, 0, 1)
        if self.schedule == SHIFT:
            g = self.item_group(task)
            return QWalk(0, task.n_block - g.first, m_total, m_total, 0, 1)
        if self.schedule == SYMMETRIC_SHIFT and task.member == 0:
            g = self.item_group(task)
            rho = self.rectangle_begin(g)
            return QWalk(rho, task.n_block - g.first, m_total - rho, m_total - rho, self.sigma() * task.n_block, 1)
        return QWalk(0, 0, max(m_total, 1), 0, task.tiles.m_block_end(task.n_block) - 1, -1)  # descending

    def q_tile_at(self, task: BwdTask, step: int) -> int:
        return self.q_walk(task).at(step // self.group())

    def steps(self, task: BwdTask) -> list[tuple[int, int, int]]:
        """The task's steps in order: (query head, Q tile, rank)."""
        walk, ranks = self.q_walk(task), self.task_ranks(task)
        out = []
        for i in range(self.num_q_tiles(task)):
            m = walk.at(i)
            out += [(self.q_head(task, sub), m, ranks.at(m)) for sub in range(self.group())]
        return out

    def task_ranks(self, task: BwdTask) -> TaskRanks:
        g = self.item_group(task) if self.schedule == SHIFT or self.paired() else ItemGroup(0, 1)
        p = task.item % self.items_per_head() if self.paired() else task.n_block
        return TaskRanks(self.schedule, task.n_block, task.member, g.first, g.size, p - g.first,
                         max(self.sigma(), 1), self.rectangle_begin(g), self.num_n_blocks, task.tiles)

    def dq_rank(self, task: BwdTask, m_block: int) -> int:
        return self.task_ranks(task).at(m_block)

    def dq_tile_index(self, task: BwdTask, head: int, m_block: int) -> int:
        geo = self.geometry()
        return geo.dq_tile(geo.seq(task.batch), head, m_block)


MAX_PACKED_WALK_STEPS = 128


@dataclass(frozen=True)
class GroupSplitTraits:
    """Mirror of the generated GroupSplitTraits (csrc/generated/kernel_traits.h): the trait
    table's per-head-dim knobs of the query-head group split (group_split_traits gives a
    pair's; the defaults are the table's)."""
    det_band_walk_steps: int = _traits.GROUP_SPLIT_DEFAULTS["det_band_walk_steps"]
    nondet_band_walk_steps: int = _traits.GROUP_SPLIT_DEFAULTS["nondet_band_walk_steps"]
    nondet_full_walk_steps: int = _traits.GROUP_SPLIT_DEFAULTS["nondet_full_walk_steps"]
    band_min_parts: int = _traits.GROUP_SPLIT_DEFAULTS["band_min_parts"]
    det_full_walk_steps: int = _traits.GROUP_SPLIT_DEFAULTS["det_full_walk_steps"]


def group_split_traits(head_dim: int, head_dim_v: int | None = None) -> GroupSplitTraits:
    """A head-dim pair's GroupSplitTraits, from the generated trait table (dash._traits)."""
    pair = (head_dim, head_dim if head_dim_v is None else head_dim_v)
    return GroupSplitTraits(**_traits.GROUP_SPLIT_TRAITS.get(pair, {}))


def walk_step_limit(packed: bool, deterministic: bool, full_mask: bool,
                    traits: GroupSplitTraits = GroupSplitTraits()) -> int:
    """Mirror of schedule.h's walk_step_limit: the longest walk (Q tiles x query heads) a
    shape-only split allows; 0 where the walk's length never splits a group."""
    if packed:
        return MAX_PACKED_WALK_STEPS
    if not deterministic:
        return traits.nondet_full_walk_steps if full_mask else traits.nondet_band_walk_steps
    return traits.det_full_walk_steps if full_mask else traits.det_band_walk_steps


def diagonal_tail_cap(deterministic: bool, items_per_head: int, grid: int) -> int:
    """Mirror of schedule.h's diagonal_tail_cap: the longest tail (BwdScheduleView.tail_items) a
    call deals longest first; a deterministic call's at most half the grid or 5/8 of a head's
    items, whichever is more (its reversed waits chain hand-offs)."""
    if not deterministic:
        return grid
    return max(grid // 2, 5 * items_per_head // 8)


def kv_parts_fill_grid(packed: bool, deterministic: bool) -> bool:
    """Mirror of schedule.h's kv_parts_fill_grid: whether the split may follow the grid
    (fixed-length non-deterministic calls, whose bits need not be the same on every grid)."""
    return not packed and not deterministic


def kv_parts_minimum(packed: bool, full_mask: bool, traits: GroupSplitTraits = GroupSplitTraits()) -> int:
    """Mirror of schedule.h's kv_parts_minimum: fixed-length band calls split at least
    traits.band_min_parts ways."""
    return 1 if packed or full_mask else traits.band_min_parts


def kv_parts_for(items: int, group: int, resident: int, longest_q_tiles: int = 0, max_walk_steps: int = 0,
                 fill_grid: bool = False, min_parts: int = 1) -> int:
    """Mirror of schedule.h's kv_parts_for: where the grid may decide and the group walks
    cannot fill it, split until 3 rounds of tasks; otherwise split until the longest walk is
    within the step limit (a function of the group, mask and sequence length alone); either
    way at least min_parts ways. Halving while the group divides."""
    parts = 1
    if fill_grid and items < resident:
        while group % (2 * parts) == 0 and (parts < min_parts or items * parts < 3 * resident):
            parts *= 2
    else:
        while group % (2 * parts) == 0 and (parts < min_parts or (
                max_walk_steps > 0 and longest_q_tiles * (group // parts) > max_walk_steps)):
            parts *= 2
    return parts


DEAL_CHUNK_ITEMS = 128
ONE_CHUNK = 1 << 20  # every walk in one chunk
DEAL_CHUNK_BYTES = 8 << 20


DEAL_CHUNK_SPLIT_WALKS = 4
DEAL_CHUNK_SPLIT_BYTES = 32 << 20


def deal_chunk_for(seqlen_q: int, num_n_blocks: int, head_dim: int, head_dim_v: int, walk_heads: int,
                   parts: int = 1) -> int:
    """Mirror of schedule.h's deal_chunk_for: walks per dealing chunk of a fixed-length
    full-mask ascending call (about DEAL_CHUNK_ITEMS items, their Q and dO within
    DEAL_CHUNK_BYTES; a split group's calls at least DEAL_CHUNK_SPLIT_WALKS walks within
    DEAL_CHUNK_SPLIT_BYTES)."""
    nbytes = seqlen_q * (head_dim + head_dim_v) * 2 * walk_heads
    chunk = DEAL_CHUNK_BYTES // nbytes if nbytes > 0 else 1
    chunk = min(chunk, DEAL_CHUNK_ITEMS // num_n_blocks if num_n_blocks > 0 else 1)
    if parts > 1:
        chunk = max(chunk, min(DEAL_CHUNK_SPLIT_WALKS, DEAL_CHUNK_SPLIT_BYTES // nbytes if nbytes > 0 else 1))
    return min(max(chunk, 1), ONE_CHUNK)


BAND_SECTION_BYTES = 40 << 20


def band_deal_chunk_for(seqlen_q: int, head_dim: int, head_dim_v: int, walk_heads: int, deterministic: bool) -> int:
    """Mirror of schedule.h's band_deal_chunk_for: walks per dealing chunk of a fixed-length
    banded ascending call. Non-deterministic: FlashAttention-3's sections (the walks whose Q,
    dO and fp32 dQ accumulator fit BAND_SECTION_BYTES, rounded down to a power of two);
    deterministic: every walk in one chunk."""
    if deterministic:
        return ONE_CHUNK
    nbytes = seqlen_q * ((head_dim + head_dim_v) * 2 + head_dim * 4) * walk_heads
    fit = BAND_SECTION_BYTES // nbytes if nbytes > 0 else 1
    chunk = 1
    while chunk < ONE_CHUNK and 2 * chunk <= fit:
        chunk *= 2
    return chunk


def counter_dealt_schedule(schedule: str, packed: bool) -> bool:
    """schedule.h's counter_dealt_schedule: packed calls, and the fixed-length orders common
    to a whole head (ascending, diagonal)."""
    return packed or schedule in (DIAGONAL, ASCENDING)


def deterministic_auto_schedule(mask: MaskWindow | bool) -> str:
    """What `auto` runs with deterministic=True (bwd_plan.cpp): the grid-invariant orders,
    ascending on a full mask, diagonal on a band (causal or a sliding window)."""
    return ASCENDING if as_mask_window(mask).full() else DIAGONAL


def bwd_varlen_order(schedule: str, deterministic: bool) -> int:
    """The item numbering of a packed backward (schedule.h's bwd_varlen_order)."""
    return SEQUENCE_MAJOR if schedule == DIAGONAL or not deterministic else SEQUENCE_TILE_MAJOR


def diagonal_applies(view: BwdScheduleView) -> bool:
    """Any band (causal or a sliding window), packed or fixed length."""
    return not view.mask.full()


def shift_applies(view: BwdScheduleView) -> bool:
    return view.mask.full() and view.num_m_blocks >= min(view.num_n_blocks, view.grid)


def symmetric_shift_applies(view: BwdScheduleView) -> bool:
    if not view.mask.causal() or view.seqlen_q != view.seqlen_k or view.block_n % view.block_m != 0:
        return False
    if view.num_n_blocks < 2 or view.num_n_blocks % 2 != 0:
        return False
    pairs = view.num_n_blocks // 2
    return view.num_m_blocks - (view.block_n // view.block_m) * (pairs - 1) >= min(pairs, view.grid)


def applies(view: BwdScheduleView) -> bool:
    """Whether the view's schedule may run on its shape (else the planner falls back)."""
    if view.schedule == SHIFT:
        return shift_applies(view)
    if view.schedule == SYMMETRIC_SHIFT:
        return symmetric_shift_applies(view)
    if view.schedule == DIAGONAL:
        return diagonal_applies(view)
    return True


def fallback_schedule(mask: MaskWindow | bool) -> str:
    """What the planner runs when a requested schedule does not apply (bwd_plan.cpp)."""
    mask = as_mask_window(mask)
    return DIAGONAL if mask.windowed() else DESCENDING if not mask.full() else ASCENDING


def cta_programs(view: BwdScheduleView) -> list[list[BwdTask]]:
    """The tasks each CTA runs, in order."""
    programs = []
    for cta in range(view.grid):
        program = []
        for round_ in range(view.num_rounds()):
            item = view.item_id(cta, round_)
            if item >= 0:
                program.extend(view.task(item, member) for member in range(view.members()))
        programs.append(program)
    return programs


def dq_accumulation_orders(view: BwdScheduleView) -> dict[tuple[int, int, int], list[int]]:
    """For every dQ tile (batch, head, m_block) that receives partials: the KV tiles in
    the order the deterministic schedule adds them (sorted by rank). Checks that the
    ranks of each tile are exactly 0..k-1."""
    ranked: dict[tuple[int, int, int], list[tuple[int, int]]] = {}
    for program in cta_programs(view):
        for task in program:
            for head, m, rank in view.steps(task):
                ranked.setdefault((task.batch, head, m), []).append((rank, task.n_block))
    orders = {}
    for tile, pairs in ranked.items():
        ranks = sorted(r for r, _ in pairs)
        if ranks != list(range(len(pairs))):
            raise AssertionError(f"dQ tile {tile}: ranks {ranks} are not 0..{len(pairs) - 1}")
        orders[tile] = [n for _, n in sorted(pairs)]
    return orders


if __name__ == "__main__":
    from dash.schedule_sim import main

    main()
