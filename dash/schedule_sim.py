"""Discrete-event model of a backward schedule (the DASH paper's DAG model).

Each CTA runs its tasks (dash.schedule.cta_programs) one Q tile at a time: a step is a
compute of cost c followed by a reduction of cost r into the dQ tile, on one chain per
CTA. Under a banded mask (causal, sliding window) dQ tile m takes partials from KV tiles
[n_block_begin(m), n_block_end(m)) only, each task visits Q tiles [m_block_begin(n),
m_block_end(n)) (dash.geometry.SeqTiles). A reduction may start only after the tile's
previous partial (in the schedule's fixed order) has been added; the time a CTA waits for
that is its *stall*. In non-deterministic mode reductions never wait. The model gives each schedule's makespan
and stall, detects deadlock, and draws Gantt charts.

Counter-dealt views (view.counter_dealt(): packed calls, diagonal, ascending) can
be dealt as the kernel deals them (simulate(..., counter=True)); by default every view runs
the static rounds of cta_programs.

Beyond the paper's model, an optional memory-locality term charges the steps of a round
whose heads' Q and dO do not fit in L2 (miss_cost). Calibrated on one H200 run (reduce 0.5,
miss_cost 0.3) it ranks the schedules as measured at 21/24 benchmark points, and 20/24 on
an earlier run's data; without it, 13/24 (it misses every causal shape).

GQA / MQA (compare_gqa_designs): dash's design lets a task walk its K/V head's whole query
group (the steps of dash.schedule), so dK / dV never leave registers. The alternative it is
compared with splits tasks per query head (the MHA schedule over all query heads) and adds
each task's dK / dV partial into its K/V head's tile in a fixed order (query head in the
group), one more ordered reduction per task.
"""
from __future__ import annotations

import dataclasses
import heapq
import random
from dataclasses import dataclass, field

from ._traits import BWD_TILE
from .geometry import MaskWindow, as_mask_window, make_mask_window, normalized_mask_window
from .schedule import BwdScheduleView, cta_programs, diagonal_tail_cap


@dataclass
class StepEvent:
    cta: int
    n_block: int
    head: int
    batch: int
    m_block: int
    compute_start: float
    compute_end: float
    reduce_start: float  # > compute_end when the CTA stalled for its turn
    reduce_end: float


@dataclass
class SimResult:
    makespan: float
    stall: float  # total time CTAs waited for their turn to reduce
    events: list[StepEvent] = field(default_factory=list)


class Deadlock(RuntimeError):
    pass


@dataclass(frozen=True)
class _Step:
    task: object
    head: int      # query head (dQ steps); the K/V head for a dK / dV reduction
    m_block: int   # -1 for a dK / dV reduction
    key: tuple     # the tile the reduction adds into
    rank: int      # its place in that tile's order
    compute: float  # multiplier of the compute cost (0: a pure reduction)
    reduce: float   # multiplier of the reduce cost


def _task_steps(view: BwdScheduleView, task, kv_split_group: int = 0, kv_reduce: float = 0.0) -> list[_Step]:
    """One task's steps in order (see _flatten)."""
    seq = [_Step(task, head, m, (task.batch, head, m), rank, 1.0, 1.0) for head, m, rank in view.steps(task)]
    if kv_split_group:
        kv = task.kv_head // kv_split_group
        seq.append(_Step(task, kv, -1, ("kv", task.batch, kv, task.n_block), task.kv_head % kv_split_group, 0.0,
                         kv_reduce))
    return seq


def _flatten(view: BwdScheduleView, kv_split_group: int = 0, kv_reduce: float = 0.0):
    """Per CTA: its steps in order. kv_split_group > 0: the view is the per-query-head
    split of a GQA problem with that group size; each task ends with an ordered reduction
    of its dK / dV partial (kv_reduce times the dQ reduce cost)."""
    return [[step for task in program for step in _task_steps(view, task, kv_split_group, kv_reduce)]
            for program in cta_programs(view)]


def round_slowdown(view: BwdScheduleView, bytes_per_head: float, l2_bytes: float, miss_cost: float) -> list[float]:
    """Per round, the factor on each step's compute for streaming Q and dO from HBM when the
    heads a round works on do not fit in L2: 1 + miss_cost * (1 - L2 / working set)."""
    heads = [set() for _ in range(view.num_rounds())]
    for program in cta_programs(view):
        for task in program:
            heads[task.item // view.grid].add((task.batch, task.kv_head))  # an item's round
    return [1.0 + miss_cost * max(0.0, 1.0 - l2_bytes / (len(h) * bytes_per_head)) if h else 1.0 for h in heads]


def simulate(view: BwdScheduleView, compute: float = 1.0, reduce: float = 0.1, deterministic: bool = True,
             keep_events: bool = False, handoff: float = 0.0, bytes_per_head: float = 0.0,
             l2_bytes: float = 60e6, miss_cost: float = 0.0, kv_split_group: int = 0,
             kv_reduce: float = 0.0, counter: bool = False, draw_lookahead: int = 2,
             tail: bool = False, cta_speed=None, step_jitter: float = 0.0, seed: int = 0) -> SimResult:
    """Runs every CTA's program with all CTAs resident (the persistent grid). Raises
    Deadlock if some CTA can never take its turn.

    counter: deal items from a counter as the kernel does for counter-dealt views
    (view.counter_dealt()): a CTA draws its next item, in item order, once its producer has
    issued the current task's loads, modelled as when it starts the task's last
    `draw_lookahead` steps; else the static rounds of cta_programs (the default, which the
    paper's model and the deadlock tests use). tail: with counter dealing, deal diagonal's
    tail longest first (view.tail_items(), as long as diagonal_tail_cap allows the mode unless
    the view sets its own tail_cap; every CTA is resident here), each tail task drawing
    its successor only once its last reduction is done, as the kernels of the pairs in
    _traits.BWD_TAIL_LONGEST_FIRST do in deterministic mode.

    handoff: extra latency when a CTA had to wait for the previous partial of its dQ tile
    (the semaphore release reaching a spinning waiter). The paper's model has none; on the
    GPU the release / poll round trip is of the order of a tile's compute.

    bytes_per_head, l2_bytes, miss_cost: a memory-locality term the paper's model lacks
    (see round_slowdown); miss_cost = 0 turns it off.

    cta_speed (a factor on each CTA's compute cost) and step_jitter (each step's compute
    times 1 + step_jitter * a uniform draw in [-1, 1], seeded by seed): the spread of real
    SMs' pace, which the paper's model leaves out; a fixed order's waits grow with it."""
    rng = random.Random(seed)
    if tail and view.tail_cap < 0:  # the planner's cap (make_schedule_view)
        view = dataclasses.replace(view, tail_cap=diagonal_tail_cap(deterministic, view.items_per_head(), view.grid))

    def pace(cta: int) -> float:
        base = cta_speed[cta] if cta_speed is not None else 1.0
        return base * (1.0 + step_jitter * rng.uniform(-1.0, 1.0)) if step_jitter else base

    factor = (round_slowdown(view, bytes_per_head, l2_bytes, miss_cost) if miss_cost > 0 and bytes_per_head > 0
              else [1.0] * view.num_rounds())
    next_item = 0
    if counter:
        assert view.members() == 1, "paired schedules are dealt in static rounds"
        steps: list[list[_Step]] = [[] for _ in range(view.grid)]
    else:
        steps = _flatten(view, kv_split_group, kv_reduce)
    cost = [[compute * s.compute * factor[s.task.item // view.grid] * pace(c) for s in seq]
            for c, seq in enumerate(steps)]

    draw_at = [-1] * view.grid  # counter: the position at which each CTA draws its next item

    tail_first = view.num_items() - (view.tail_items() if tail else 0)

    def draw(cta: int) -> None:
        nonlocal next_item
        if next_item < view.num_items():
            in_tail = next_item >= tail_first
            item = view.tail_item(next_item) if in_tail else next_item
            seq = _task_steps(view, view.task(item, 0), kv_split_group, kv_reduce)
            lookahead = 0 if in_tail and deterministic else draw_lookahead
            draw_at[cta] = len(steps[cta]) + max(0, len(seq) - lookahead)
            steps[cta].extend(seq)
            cost[cta].extend(compute * s.compute * factor[s.task.item // view.grid] * pace(cta) for s in seq)
            next_item += 1

    if counter:
        for cta in range(view.grid):  # every CTA draws its first item at t = 0 (all resident): CTA c gets item c
            draw(cta)
        for cta in range(view.grid):
            if draw_at[cta] == 0:
                draw(cta)
    position = [0] * view.grid
    finish = [0.0] * view.grid
    added: dict = {}      # dQ tile -> partials added so far
    tile_free: dict = {}  # dQ tile -> end of its last reduction
    parked: dict = {}     # (dQ tile, rank) -> (cta, time its compute ended)
    events: list[StepEvent] = []
    stall = 0.0
    ready: list[tuple[float, int]] = [(cost[c][0], c) for c in range(view.grid) if steps[c]]
    heapq.heapify(ready)


    def do_reduce(cta: int, compute_end: float) -> None:
        nonlocal stall
        while True:
            step = steps[cta][position[cta]]
            key = step.key
            free = tile_free.get(key, 0.0)
            start = (free + handoff if free > compute_end else compute_end) if deterministic else compute_end
            stall += start - compute_end
            end = start + reduce * step.reduce
            tile_free[key] = end
            added[key] = added.get(key, 0) + 1
            if keep_events:
                events.append(StepEvent(cta, step.task.n_block, step.head, step.task.batch, step.m_block,
                                        compute_end - cost[cta][position[cta]], compute_end, start, end))
            position[cta] += 1
            finish[cta] = end
            if counter and position[cta] == draw_at[cta]:
                draw(cta)  # the current task's loads are issued: draw the next one
            if position[cta] < len(steps[cta]):
                heapq.heappush(ready, (end + cost[cta][position[cta]], cta))
            # The tile's next partial may already be parked, waiting for this one.
            nxt = parked.pop((key, added[key]), None)
            if nxt is None:
                return
            cta, compute_end = nxt

    while ready:
        compute_end, cta = heapq.heappop(ready)
        key = steps[cta][position[cta]].key
        rank = steps[cta][position[cta]].rank
        if not deterministic or added.get(key, 0) == rank:
            do_reduce(cta, compute_end)
        else:
            parked[(key, rank)] = (cta, compute_end)
    stuck = [c for c in range(view.grid) if position[c] < len(steps[c])]
    if stuck:
        raise Deadlock(f"{len(stuck)} CTAs never got their turn (first: CTA {stuck[0]}) in {view}")
    return SimResult(max(finish, default=0.0), stall, events)


def gantt(result: SimResult, view: BwdScheduleView, path: str, max_ctas: int = 48) -> None:
    """One row per CTA: compute coloured by KV tile, reductions black, stalls red."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ctas = sorted({e.cta for e in result.events})[:max_ctas]
    row = {c: i for i, c in enumerate(ctas)}
    fig, ax = plt.subplots(figsize=(14, 0.25 * len(ctas) + 1.6))
    cmap = plt.get_cmap("tab20")
    for e in result.events:
        if e.cta not in row:
            continue
        y = row[e.cta]
        ax.barh(y, e.compute_end - e.compute_start, left=e.compute_start, color=cmap(e.n_block % 20), height=0.8)
        if e.reduce_start > e.compute_end:
            ax.barh(y, e.reduce_start - e.compute_end, left=e.compute_end, color="red", height=0.8)
        ax.barh(y, e.reduce_end - e.reduce_start, left=e.reduce_start, color="black", height=0.8)
    ax.set_yticks(range(len(ctas)))
    ax.set_yticklabels([f"CTA {c}" for c in ctas], fontsize=6)
    ax.invert_yaxis()
    ax.set_xlabel("time (compute of one tile = 1)")
    ax.set_title(f"{view.schedule}: makespan {result.makespan:.1f}, stalls {result.stall:.1f} "
                 f"(Q tiles {view.num_m_blocks}, KV tiles {view.num_n_blocks}, heads {view.heads * view.batch}, "
                 f"CTAs {view.grid}; red = waiting for the dQ tile's previous partial)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def predict(batch: int, heads: int, seqlen_q: int, seqlen_k: int, head_dim: int, causal: MaskWindow | bool,
            grid: int = 132, compute: float = 1.0, reduce: float = 0.3, schedules=None, handoff: float = 0.0,
            miss_cost: float = 0.0, l2_bytes: float = 60e6) -> dict:
    """Model makespan of each schedule that applies to the shape, plus the
    non-deterministic lower bound: {schedule: (makespan, stall)}. With miss_cost > 0 the
    model also charges rounds whose heads' Q and dO (bf16) overflow L2. `causal`: the
    causal flag or a MaskWindow."""
    from .schedule import SCHEDULES, applies, band_deal_chunk_for
    block_m, block_n = BWD_TILE[(head_dim, head_dim)]
    # Banded ascending as the deterministic planner deals it (band_deal_chunk_for).
    chunk = 1 if as_mask_window(causal).full() else band_deal_chunk_for(seqlen_q, head_dim, head_dim, 1, True)
    out = {}
    for schedule in schedules or SCHEDULES:
        view = BwdScheduleView.for_problem(batch, heads, seqlen_q, seqlen_k, block_m, block_n, causal, schedule, grid,
                                           chunk=chunk)
        if not applies(view):
            continue
        result = simulate(view, compute, reduce, handoff=handoff, bytes_per_head=4.0 * seqlen_q * head_dim,
                          l2_bytes=l2_bytes, miss_cost=miss_cost)
        out[schedule] = (result.makespan, result.stall)
    # Non-deterministic bound: the same visit orders with reductions that never wait.
    bounds = []
    for schedule in SCHEDULES:
        view = BwdScheduleView.for_problem(batch, heads, seqlen_q, seqlen_k, block_m, block_n, causal, schedule, grid,
                                           chunk=chunk)
        if applies(view):
            bounds.append(simulate(view, compute, reduce, deterministic=False, bytes_per_head=4.0 * seqlen_q * head_dim,
                                   l2_bytes=l2_bytes, miss_cost=miss_cost).makespan)
    out["non-deterministic"] = (min(bounds), 0.0)
    return out


def compare_gqa_designs(batch: int, heads: int, heads_kv: int, seqlen: int, head_dim: int, causal: MaskWindow | bool,
                        grid: int = 132, compute: float = 1.0, reduce: float = 0.5, schedule: str | None = None,
                        miss_cost: float = 0.3, l2_bytes: float = 60e6) -> dict:
    """Model makespans of the two deterministic GQA designs with the schedule `auto` would
    pick (or `schedule`): {"group_walk": (makespan, stall, schedule), "split_<p>_ordered_dkv":
    (...) for groups split into p = 2, 4 sub-walks, "split_ordered_dkv": (...) (one query head a
    task), "non-deterministic": (...)}. A dK + dV tile is 2 * block_n / block_m dQ tiles of fp32,
    so its ordered reduction costs that many dQ reductions."""
    from .schedule import ASCENDING, DIAGONAL, SHIFT, SYMMETRIC_SHIFT, applies, fallback_schedule
    block_m, block_n = BWD_TILE[(head_dim, head_dim)]
    group = heads // heads_kv
    bytes_per_head = 4.0 * seqlen * head_dim
    mask = normalized_mask_window(causal, seqlen, seqlen)
    auto = [SHIFT, ASCENDING] if mask.full() else [SYMMETRIC_SHIFT] if mask.causal() else [DIAGONAL]

    def pick(h, hkv):
        for name in ([schedule] if schedule else auto):
            view = BwdScheduleView.for_problem(batch, h, seqlen, seqlen, block_m, block_n, mask, name, grid, hkv)
            if applies(view):
                return view
        return BwdScheduleView.for_problem(batch, h, seqlen, seqlen, block_m, block_n, mask,
                                           fallback_schedule(mask), grid, hkv)

    walk = pick(heads, heads_kv)
    out = {}
    r = simulate(walk, compute, reduce, bytes_per_head=bytes_per_head * group, l2_bytes=l2_bytes,
                 miss_cost=miss_cost)
    out["group_walk"] = (r.makespan, r.stall, walk.schedule)
    # Split each group into `parts` sub-walks of group / parts query heads (parts = group: one
    # query head a task), whose dK / dV partials add in a fixed order.
    for parts in sorted({p for p in (2, 4, group) if 1 < p <= group and group % p == 0}):
        split = pick(heads, heads_kv * parts)
        r = simulate(split, compute, reduce, bytes_per_head=bytes_per_head * group // parts, l2_bytes=l2_bytes,
                     miss_cost=miss_cost, kv_split_group=parts, kv_reduce=2.0 * block_n / block_m)
        out["split_ordered_dkv" if parts == group else f"split_{parts}_ordered_dkv"] = (r.makespan, r.stall,
                                                                                        split.schedule)
    r = simulate(walk, compute, reduce, deterministic=False, bytes_per_head=bytes_per_head * group,
                 l2_bytes=l2_bytes, miss_cost=miss_cost)
    out["non-deterministic"] = (r.makespan, 0.0, walk.schedule)
    return out


def mask_name(mask: MaskWindow | bool) -> str:
    mask = as_mask_window(mask)
    return "full" if mask.full() else "causal" if mask.causal() else f"window ({mask.left}, {mask.right})"


def main(argv=None) -> None:
    import argparse
    from .schedule import SCHEDULES
    parser = argparse.ArgumentParser(prog="python -m dash.schedule",
                                     description="Predicted time of each backward schedule in the DAG model.")
    parser.add_argument("--seqlen", type=int, default=4096)
    parser.add_argument("--seqlen-k", type=int, default=None, help="default: --seqlen")
    parser.add_argument("--head-dim", type=int, choices=sorted({d for d, dv in BWD_TILE if d == dv}), default=128)
    parser.add_argument("--batch", type=int, default=None, help="default: 16384 // seqlen")
    parser.add_argument("--heads", type=int, default=None, help="default: 2048 // head_dim")
    parser.add_argument("--causal", action="store_true")
    parser.add_argument("--window", type=int, nargs=2, metavar=("LEFT", "RIGHT"), default=None,
                        help="sliding window (FlashAttention-3's window_size; negative: unbounded)")
    parser.add_argument("--grid", type=int, default=132, help="resident CTAs (SMs)")
    parser.add_argument("--compute", type=float, default=1.0, help="cost of one tile's compute")
    parser.add_argument("--reduce", type=float, default=0.5, help="cost of one dQ reduction")
    parser.add_argument("--miss-cost", type=float, default=0.3,
                        help="slowdown of a step whose round's heads overflow L2 (0: the paper's model)")
    parser.add_argument("--l2-mb", type=float, default=60.0, help="L2 size (H200: 60 MB, H100: 50 MB)")
    parser.add_argument("--schedule", choices=SCHEDULES, default=None, help="only this one (and for --gantt)")
    parser.add_argument("--gantt", default=None, help="write a Gantt chart PNG of --schedule (default: the best)")
    args = parser.parse_args(argv)
    seqlen_k = args.seqlen_k or args.seqlen
    batch = args.batch or max(16384 // args.seqlen, 1)
    heads = args.heads or 2048 // args.head_dim
    left, right = args.window or (-1, -1)
    mask = make_mask_window(args.causal, left, right, args.seqlen, seqlen_k)
    results = predict(batch, heads, args.seqlen, seqlen_k, args.head_dim, mask, args.grid, args.compute,
                      args.reduce, [args.schedule] if args.schedule else None, miss_cost=args.miss_cost,
                      l2_bytes=args.l2_mb * 1e6)
    bound = results["non-deterministic"][0]
    print(f"batch {batch}, heads {heads}, seqlen_q {args.seqlen}, seqlen_k {seqlen_k}, head_dim {args.head_dim}, "
          f"{mask_name(mask)}, {args.grid} CTAs, c={args.compute}, r={args.reduce}, "
          f"L2 miss cost {args.miss_cost}")
    print(f"{'schedule':>18} {'makespan':>10} {'stall':>10} {'vs non-det':>10}")
    for name, (makespan, stall) in sorted(results.items(), key=lambda kv: kv[1][0]):
        print(f"{name:>18} {makespan:>10.1f} {stall:>10.1f} {bound / makespan:>10.3f}")
    if args.gantt:
        deterministic = [k for k in results if k != "non-deterministic"]
        chosen = args.schedule or min(deterministic, key=lambda k: results[k][0])
        block_m, block_n = BWD_TILE[(args.head_dim, args.head_dim)]
        view = BwdScheduleView.for_problem(batch, heads, args.seqlen, seqlen_k, block_m, block_n, mask, chosen,
                                           args.grid)
        gantt(simulate(view, args.compute, args.reduce, keep_events=True, bytes_per_head=4.0 * args.seqlen * args.head_dim,
                       l2_bytes=args.l2_mb * 1e6, miss_cost=args.miss_cost), view, args.gantt)
        print(f"wrote {args.gantt} ({chosen})")
