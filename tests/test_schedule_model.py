"""CPU: the schedule model (dash/schedule.py) is valid on many shapes (MHA and GQA / MQA,
full, causal and sliding-window masks) and agrees exactly with the kernel's definition
(csrc/kernels/bwd/schedule.h, compiled here for the host); the geometry layer
(dash/geometry.py) agrees with seq_geometry.h and mask.h on random fixed-length and packed
(cu_seqlens) geometries and random bands."""
import dataclasses
import itertools
import pathlib
import random
import shutil
import subprocess

import numpy as np
import pytest

from dash.geometry import (CAUSAL, FULL, SEQUENCE_MAJOR, SEQUENCE_TILE_MAJOR, UNIT_MAJOR, MaskWindow, SeqGeometry,
                           VarlenTiles, make_mask_window, normalized_mask_window, seq_tiles)
from dash.schedule import (ASCENDING, DESCENDING, DIAGONAL, FA3_BASELINE, ONE_CHUNK, SCHEDULE_IDS, SCHEDULES, SHIFT,
                           SYMMETRIC_SHIFT, BwdScheduleView, applies, bwd_varlen_order, cta_programs,
                           diagonal_applies, diagonal_tail_cap, dq_accumulation_orders, fallback_schedule,
                           shift_applies, symmetric_shift_applies)
from dash.schedule_sim import Deadlock, predict, simulate

ROOT = pathlib.Path(__file__).resolve().parents[1]


def random_bound(rng, length):
    """One side of a band: unbounded, 0, small, about the sequence, or beyond it."""
    return rng.choice([-1, -1, 0, 0, rng.randint(1, 8), rng.randint(1, 300), rng.randint(0, max(length, 1)),
                       length - 1, length, length + rng.randint(1, 5000)])


def random_mask(rng, seqlen_q, seqlen_k):
    """Full, causal, or a sliding window (Mistral's (W, 0), HF's (W, W), or random bounds)."""
    kind = rng.random()
    if kind < 0.25:
        return FULL
    if kind < 0.5:
        return CAUSAL
    left, right = random_bound(rng, seqlen_k), random_bound(rng, seqlen_q)
    return rng.choice([MaskWindow(left, 0), MaskWindow(left, left), MaskWindow(left, right), MaskWindow(left, right)])


def random_views(count, seed=0):
    """Random shapes, masks and grids under every schedule (a schedule whose preconditions
    fail is replaced by the planner's fallback, as the kernel would run it)."""
    rng = random.Random(seed)
    views = []
    for _ in range(count):
        block_m, block_n = rng.choice([(64, 128), (128, 128)])
        seqlen_q = rng.choice([1, 17, 113, 300, 1000, 2048, 4097, rng.randint(1, 5000)])
        seqlen_k = rng.choice([seqlen_q, seqlen_q, rng.randint(1, 5000)])
        mask = random_mask(rng, seqlen_q, seqlen_k)
        schedule = rng.choice(SCHEDULES)
        grid = rng.choice([1, 3, 7, 16, 33, 132])
        batch, heads_kv = rng.randint(1, 3), rng.randint(1, 5)
        group = rng.choice([1, 1, 1, 2, 4, 8])  # GQA groups (heads_kv = 1: MQA)
        heads = heads_kv * group
        parts = rng.choice([p for p in (1, 2, 4, 8) if group % p == 0])  # split groups
        view = BwdScheduleView.for_problem(batch, heads, seqlen_q, seqlen_k, block_m, block_n, mask, schedule, grid,
                                           heads_kv, parts)
        if not applies(view):
            view = BwdScheduleView.for_problem(batch, heads, seqlen_q, seqlen_k, block_m, block_n, view.mask,
                                               fallback_schedule(view.mask), grid, heads_kv, parts)
        views.append(view)
    return views


def mask_id(mask):
    return "f" if mask.full() else "c" if mask.causal() else f"w{mask.left}_{mask.right}"


def view_id(v):
    return (f"{v.schedule}-{mask_id(v.mask)}-g{v.grid}-m{v.num_m_blocks}-n{v.num_n_blocks}"
            f"-h{v.heads}kv{v.heads_kv}")


def visible_keys(q, len_q, len_k, mask):
    """The keys query row q sees, straight from the band's definition: [first, last]."""
    shift = len_k - len_q
    first = 0 if mask.left < 0 else max(q + shift - mask.left, 0)
    last = len_k - 1 if mask.right < 0 else min(q + shift + mask.right, len_k - 1)
    return first, last


def touching_kv_tiles(len_q, len_k, block_m, block_n, mask, m_block):
    """KV tiles holding a key that some query row of Q tile m_block sees, row by row."""
    tiles = set()
    for q in range(m_block * block_m, min((m_block + 1) * block_m, len_q)):
        first, last = visible_keys(q, len_q, len_k, mask)
        tiles.update(range(first // block_n, last // block_n + 1) if first <= last else ())
    return sorted(tiles)


@pytest.mark.parametrize("view", random_views(200), ids=view_id)
def test_orders_cover_touching_tiles_once(view):
    orders = dq_accumulation_orders(view)  # also checks ranks are 0..k-1
    tiles = view.tiles()
    for m in range(view.num_m_blocks):
        want = touching_kv_tiles(view.seqlen_q, view.seqlen_k, view.block_m, view.block_n, view.mask, m)
        assert want == list(range(tiles.n_block_begin(m), max(tiles.n_block_end(m), tiles.n_block_begin(m))))
        for b, h in itertools.product(range(view.batch), range(view.heads)):
            got = orders.get((b, h, m), [])  # every query head of a K/V head's group sees the same tiles
            assert sorted(got) == want, f"tile {(b, h, m)}: contributors {sorted(got)}, expected {want}"


@pytest.mark.parametrize("view", random_views(80, seed=1), ids=view_id)
def test_no_deadlock_with_all_ctas_resident(view):
    simulate(view)  # raises Deadlock if some CTA never gets its turn


def test_the_simulator_detects_deadlock():
    """An order whose waits form a cycle (two tiles, two CTAs, crossed ranks) is caught."""
    view = BwdScheduleView.for_problem(1, 1, 128, 256, 64, 128, False, SHIFT, 2)

    class Crossed(type(view)):
        def task_ranks(self, task):
            ranks = super().task_ranks(task)
            return type(ranks)(**{**ranks.__dict__, "local": 1 - ranks.local})

    crossed = Crossed(**view.__dict__)
    with pytest.raises(Deadlock):
        simulate(crossed)


def test_every_task_runs_exactly_once():
    for view in random_views(120, seed=2):
        tasks = sorted((t.batch, t.kv_head, t.part, t.n_block) for program in cta_programs(view) for t in program)
        assert tasks == sorted(itertools.product(range(view.batch), range(view.heads_kv), range(view.parts),
                                                 range(view.num_n_blocks)))


def test_stepping_a_walk_with_next_matches_at():
    """The producer steps each task's Q tiles with QWalk.next (no division a step); it must
    visit what at() names, for every schedule's walks (shift's wrap, symmetric shift's jump,
    descending's walk down)."""
    for view in random_views(120, seed=21):
        for program in cta_programs(view):
            for task in program:
                walk = view.q_walk(task)
                m = walk.at(0)
                for i in range(view.num_q_tiles(task)):
                    assert m == walk.at(i)
                    m = walk.next(m, i)


def test_groups_touch_distinct_q_tiles_at_every_step():
    """Shift and symmetric shift: in a round, the CTAs working on one head are never on the
    same Q tile at the same step (counting a symmetric pair's steps across both tiles)."""
    checked = 0
    for view in random_views(500, seed=3):
        if view.schedule not in (SHIFT, SYMMETRIC_SHIFT):
            continue
        checked += 1
        for round_ in range(view.num_rounds()):
            timelines = []
            for cta in range(view.grid):
                item = view.item_id(cta, round_)
                if item < 0:
                    continue
                line = []
                for member in range(view.members()):
                    task = view.task(item, member)
                    line += [(task.batch, h, m) for h, m, _ in view.steps(task)]
                timelines.append(line)
            for step in range(max(map(len, timelines), default=0)):
                touched = [line[step] for line in timelines if step < len(line)]
                assert len(touched) == len(set(touched)), f"{view_id(view)} round {round_} step {step}: {touched}"
    assert checked > 20


def test_shift_small_case_by_hand():
    """4 KV tiles, 4 Q tiles, one head, 4 CTAs: CTA s starts at Q tile s; Q tile q takes
    its adds from s = q, q-1, ..., 0, 3, ..., q+1."""
    view = BwdScheduleView.for_problem(1, 1, 256, 512, 64, 128, False, SHIFT, 4)
    assert [[view.q_tile_at(view.task(s, 0), t) for t in range(4)] for s in range(4)] == \
        [[0, 1, 2, 3], [1, 2, 3, 0], [2, 3, 0, 1], [3, 0, 1, 2]]
    assert dq_accumulation_orders(view)[(0, 0, 0)] == [0, 3, 2, 1]
    assert dq_accumulation_orders(view)[(0, 0, 2)] == [2, 1, 0, 3]


def test_shift_over_two_rounds_puts_the_earlier_round_first():
    """6 KV tiles of one head over a grid of 4: tiles 0-3 in round 0, 4-5 in round 1."""
    view = BwdScheduleView.for_problem(1, 1, 512, 768, 64, 128, False, SHIFT, 4)
    for m, order in dq_accumulation_orders(view).items():
        assert sorted(order[:4]) == [0, 1, 2, 3] and sorted(order[4:]) == [4, 5]
    simulate(view)


def test_causal_deals_longest_tasks_first_and_balances():
    """Banded ascending is dealt from a counter, KV tile by KV tile within a chunk of walks (the
    longest tasks first): greedy dealing ends within 1% of the mean load for any chunk, where
    diagonal (shortest first within a head) leaves a tail of several percent, unless its last
    items are dealt longest first (its tail, view.tail_items())."""
    def imbalance(view, tail=False):
        total = sum(view.num_steps(view.task(i, 0)) for i in range(view.num_items()))
        return simulate(view, 1.0, 0.0, deterministic=False, counter=True, tail=tail).makespan / (total / view.grid)
    for chunk in (1, 2, 16, ONE_CHUNK):
        view = BwdScheduleView.for_problem(1, 16, 16384, 16384, 64, 128, True, ASCENDING, 132, chunk=chunk)
        assert view.counter_dealt()
        n_blocks = [view.task(i, 0).n_block for i in range(min(chunk, 16) * view.num_n_blocks)]
        assert n_blocks == sorted(n_blocks)  # within a chunk: KV tile 0 of every walk first
        assert imbalance(view) < 1.01
    diagonal = BwdScheduleView.for_problem(1, 16, 16384, 16384, 64, 128, True, DIAGONAL, 132)
    assert imbalance(diagonal) > 1.05
    assert imbalance(diagonal, tail=True) < 1.02  # "bwd_tail": "longest_first" (hdim 128's kernels)


def test_fa3_baseline_deals_head_by_head_in_kv_tile_order():
    view = BwdScheduleView.for_problem(2, 3, 1000, 1000, 64, 128, True, FA3_BASELINE, 7)
    n = view.num_n_blocks
    for item in range(view.num_items()):
        task = view.task(item, 0)
        assert (task.batch * view.heads_kv + task.kv_head, task.n_block) == divmod(item, n)
    assert [view.item_id(cta, 1) for cta in range(view.grid)] == list(range(7, 14))  # no snake


def test_fa3_baseline_is_ascending_on_full_masks():
    for seqlen_q, seqlen_k, grid in ((1000, 1531, 7), (4096, 4096, 132)):
        args = (2, 3, seqlen_q, seqlen_k, 64, 128, False)
        base = BwdScheduleView.for_problem(*args, FA3_BASELINE, grid)
        ascending = BwdScheduleView.for_problem(*args, ASCENDING, grid)
        assert cta_programs(base) == cta_programs(ascending)
        assert dq_accumulation_orders(base) == dq_accumulation_orders(ascending)


def test_symmetric_pairs_have_equal_work():
    for seqlen in (1000, 4096, 16384):
        view = BwdScheduleView.for_problem(1, 4, seqlen, seqlen, 64, 128, True, SYMMETRIC_SHIFT, 132)
        assert symmetric_shift_applies(view)
        work = {sum(view.num_steps(view.task(i, mb)) for mb in (0, 1)) for i in range(view.num_items())}
        assert len(work) == 1


def test_symmetric_shift_preconditions():
    ok = BwdScheduleView.for_problem(1, 2, 2048, 2048, 64, 128, True, SYMMETRIC_SHIFT, 132)
    assert symmetric_shift_applies(ok)
    for bad in (BwdScheduleView.for_problem(1, 2, 2048, 2048, 64, 128, False, SYMMETRIC_SHIFT, 132),  # full mask
                BwdScheduleView.for_problem(1, 2, 2048, 3000, 64, 128, True, SYMMETRIC_SHIFT, 132),   # sq != sk
                BwdScheduleView.for_problem(1, 2, 1100, 1100, 64, 128, True, SYMMETRIC_SHIFT, 132),   # 9 KV tiles
                BwdScheduleView.for_problem(1, 2, 2048, 2048, 64, 128, MaskWindow(256, 0), SYMMETRIC_SHIFT,
                                            132)):                                                    # a window
        assert not symmetric_shift_applies(bad)


def test_mask_windows_normalize_as_flash_attention_3():
    """Bounds covering the whole sequence are unbounded (a window wider than the sequence is
    no window), causal forces right = 0, and the views carry the band the op runs."""
    assert make_mask_window(False, -1, -1, 100, 100) == FULL
    assert make_mask_window(True, -1, -1, 100, 100) == CAUSAL
    assert make_mask_window(True, 30, 7, 100, 100) == MaskWindow(30, 0)
    assert make_mask_window(False, 99, 99, 100, 100) == FULL  # both bounds reach the sequence's ends
    assert make_mask_window(False, 99, 98, 100, 100) == MaskWindow(-1, 98)
    assert make_mask_window(False, 98, 0, 100, 100) == MaskWindow(98, 0)
    assert make_mask_window(False, 5000, 0, 100, 100) == CAUSAL
    view = BwdScheduleView.for_problem(1, 1, 1000, 1000, 64, 128, MaskWindow(5000, 0), DIAGONAL)
    assert view.mask == CAUSAL and view.mask.causal() and not view.mask.windowed()
    assert BwdScheduleView.for_problem(1, 1, 1, 1000, 64, 128, True).mask == CAUSAL  # one query row stays causal
    assert BwdScheduleView.for_problem(1, 1, 1000, 1000, 64, 128, False).mask.full()
    window = BwdScheduleView.for_problem(1, 1, 1000, 1000, 64, 128, MaskWindow(127, 127), DIAGONAL).mask
    assert window.windowed() and window.kind() == 1


def test_planner_fallbacks_and_preconditions_by_mask():
    """Diagonal runs on any band (fixed length too), shift on full masks only; what the
    planner falls back to (bwd_plan.cpp)."""
    args = (2, 4, 2048, 2048, 64, 128)
    for mask, fallback in ((FULL, ASCENDING), (CAUSAL, DESCENDING), (MaskWindow(256, 0), DIAGONAL),
                           (MaskWindow(100, 100), DIAGONAL), (MaskWindow(-1, 64), DIAGONAL)):
        view = BwdScheduleView.for_problem(*args, mask, DIAGONAL, 132)
        assert diagonal_applies(view) == (not mask.full()) == applies(view)
        assert shift_applies(BwdScheduleView.for_problem(*args, mask, SHIFT, 132)) == mask.full()
        assert fallback_schedule(mask) == fallback


# ---- closed forms of the DAG model (n KV tiles = n Q tiles = n CTAs, m heads) ----

@pytest.mark.parametrize("n,m", [(4, 1), (8, 3), (16, 2)])
def test_closed_forms_full_mask(n, m):
    c, r = 1.0, 0.25
    seqlen = 128 * n
    ascending = BwdScheduleView.for_problem(1, m, seqlen, seqlen, 128, 128, False, ASCENDING, n)
    shift = BwdScheduleView.for_problem(1, m, seqlen, seqlen, 128, 128, False, SHIFT, n)
    assert simulate(ascending, c, r).makespan == pytest.approx(m * n * (c + r) + (n - 1) * r)
    result = simulate(shift, c, r)
    assert result.makespan == pytest.approx(m * n * (c + r)) and result.stall == 0


@pytest.mark.parametrize("n", [4, 8, 16])
def test_closed_forms_causal_one_head(n):
    c, r = 1.0, 0.25
    seqlen = 128 * n
    ascending = BwdScheduleView.for_problem(1, 1, seqlen, seqlen, 128, 128, True, ASCENDING, n)
    descending = BwdScheduleView.for_problem(1, 1, seqlen, seqlen, 128, 128, True, DESCENDING, n)
    assert simulate(ascending, c, r).makespan == pytest.approx(n * (c + r) + (n - 1) * r)
    assert simulate(descending, c, r).makespan == pytest.approx(n * (c + r))
    baseline = BwdScheduleView.for_problem(1, 1, seqlen, seqlen, 128, 128, True, FA3_BASELINE, n)
    assert simulate(baseline, c, r).makespan == pytest.approx(n * (c + r) + (n - 1) * r)
    # Diagonal: the task of KV tile n + 1 reaches each Q tile one step before the task of
    # KV tile n, which is the order it adds in: no stall.
    diagonal = simulate(BwdScheduleView.for_problem(1, 1, seqlen, seqlen, 128, 128, True, DIAGONAL, n), c, r)
    assert diagonal.makespan == pytest.approx(n * (c + r)) and diagonal.stall == 0


@pytest.mark.parametrize("n,width", [(4, 1), (8, 2), (16, 3)])
def test_closed_form_sliding_window_diagonal(n, width):
    """A (128 * width, 0) window over n tiles, one head, n CTAs: every task visits its own Q
    tile and the `width` after it (the last ones fewer), adding as it arrives: no stall, the
    makespan is one full task's width + 1 steps."""
    c, r = 1.0, 0.25
    view = BwdScheduleView.for_problem(1, 1, 128 * n, 128 * n, 128, 128, MaskWindow(128 * width, 0), DIAGONAL, n)
    assert view.mask.windowed()
    result = simulate(view, c, r)
    assert result.stall == 0 and result.makespan == pytest.approx((width + 1) * (c + r))
    assert dq_accumulation_orders(view)[(0, 0, n - 1)] == list(range(n - 1, n - 2 - width, -1))


@pytest.mark.parametrize("n,m", [(4, 2), (8, 4), (16, 2)])
def test_closed_form_symmetric_shift(n, m):
    """m heads, n CTAs: each round holds two heads' n/2 pairs, a pair is n+1 steps, no stalls."""
    c, r = 1.0, 0.25
    seqlen = 128 * n
    view = BwdScheduleView.for_problem(1, m, seqlen, seqlen, 128, 128, True, SYMMETRIC_SHIFT, n)
    result = simulate(view, c, r)
    assert result.stall == 0
    assert result.makespan == pytest.approx(m * (n + 1) * (c + r) / 2)


def test_model_prefers_the_dash_schedules():
    full = predict(4, 16, 4096, 4096, 128, False, reduce=0.5)
    assert full["shift"][0] < full["ascending"][0]
    assert full["shift"][0] == pytest.approx(full["non-deterministic"][0])
    causal = predict(1, 16, 16384, 16384, 128, True, reduce=0.5)
    assert min(causal["descending"][0], causal["symmetric_shift"][0]) < causal["ascending"][0]
    assert causal["symmetric_shift"][1] == 0
    # The paper's baseline order pays each head's staircase: behind longest-first ascending.
    assert causal["fa3_baseline"][0] > causal["ascending"][0]


def test_cli_and_gantt(tmp_path):
    pytest.importorskip("matplotlib")
    from dash.schedule_sim import main
    png = tmp_path / "gantt.png"
    main(["--seqlen", "1024", "--causal", "--grid", "16", "--batch", "2", "--heads", "4", "--gantt", str(png)])
    assert png.stat().st_size > 10_000


def test_cli_window(capsys):
    from dash.schedule_sim import main
    main(["--seqlen", "2048", "--window", "256", "0", "--grid", "16", "--batch", "1", "--heads", "4"])
    out = capsys.readouterr().out
    assert "window (256, 0)" in out and "diagonal" in out and "symmetric_shift" not in out


# ---- the kernel's own definition, compiled for the host, must agree exactly ----

def _compile_dump(tmp_path):
    compiler = shutil.which("g++") or shutil.which("c++")
    if compiler is None:
        pytest.skip("no C++ compiler on this machine")
    exe = tmp_path / "schedule_dump"
    subprocess.run([compiler, "-std=c++17", "-O1", f"-I{ROOT / 'csrc'}",
                    str(ROOT / "tests" / "cpp" / "schedule_dump.cpp"), "-o", str(exe)], check=True)
    return exe


def _python_dump(view):
    lines = [f"case shift={int(shift_applies(view))} symmetric={int(symmetric_shift_applies(view))} "
             f"diagonal={int(diagonal_applies(view))}",
             "tail " + " ".join(str(x) for x in [view.tail_items()] + [
                 view.tail_item(d) for d in range(view.num_items() - view.tail_items(), view.num_items())])]
    for cta, program in enumerate(cta_programs(view)):
        for ordinal, task in enumerate(program):
            steps = "".join(f" {h}:{m}:{rank}" for h, m, rank in view.steps(task))
            lines.append(f"cta {cta} #{ordinal} item {task.item} member {task.member} n {task.n_block} "
                         f"h {task.kv_head} p {task.part} b {task.batch} steps{steps}")
    return lines


def test_kernel_schedule_header_matches_python_model(tmp_path):
    exe = _compile_dump(tmp_path)
    views = random_views(160, seed=4) + [
        BwdScheduleView.for_problem(1, 1, 256, 512, 64, 128, False, SHIFT, 4),
        BwdScheduleView.for_problem(2, 3, 4097, 4097, 64, 128, True, ASCENDING, 132),
        BwdScheduleView.for_problem(1, 2, 300, 1000, 128, 128, True, DESCENDING, 5),
        BwdScheduleView.for_problem(2, 3, 4096, 4096, 64, 128, True, SYMMETRIC_SHIFT, 132),
        BwdScheduleView.for_problem(1, 5, 2048, 2048, 64, 128, True, SYMMETRIC_SHIFT, 7),
        BwdScheduleView.for_problem(2, 32, 2048, 2048, 64, 128, True, SYMMETRIC_SHIFT, 132, heads_kv=8),
        BwdScheduleView.for_problem(1, 8, 1000, 1000, 64, 128, False, SHIFT, 132, heads_kv=1),
        BwdScheduleView.for_problem(2, 3, 4097, 4097, 64, 128, True, DIAGONAL, 132),
        BwdScheduleView.for_problem(2, 3, 3000, 2000, 64, 128, MaskWindow(256, 0), DIAGONAL, 17),
        BwdScheduleView.for_problem(1, 4, 2000, 3000, 128, 128, MaskWindow(100, 100), DESCENDING, 7, heads_kv=2),
        BwdScheduleView.for_problem(1, 2, 2048, 2048, 64, 128, MaskWindow(0, 300), FA3_BASELINE, 5),
        BwdScheduleView.for_problem(2, 2, 1500, 1500, 64, 128, MaskWindow(-1, 64), ASCENDING, 9),
        BwdScheduleView.for_problem(3, 5, 1000, 1000, 64, 128, False, ASCENDING, 11, chunk=4),   # chunks of 4 walks
        BwdScheduleView.for_problem(2, 8, 700, 900, 128, 128, False, ASCENDING, 3, heads_kv=2, parts=2, chunk=3),
        BwdScheduleView.for_problem(1, 3, 500, 500, 64, 128, False, ASCENDING, 1, chunk=100),   # one chunk
        BwdScheduleView.for_problem(2, 4, 1000, 1000, 64, 128, False, FA3_BASELINE, 7, chunk=2),  # not chunked
    ]
    views += [BwdScheduleView.for_problem(v.batch, v.heads, v.seqlen_q, v.seqlen_k, v.block_m, v.block_n, v.mask,
                                          ASCENDING, v.grid, v.heads_kv, v.parts, chunk=1 + i % 7)
              for i, v in enumerate(random_views(80, seed=15))]  # chunked ascending, every mask
    views += [BwdScheduleView.for_problem(v.batch, v.heads, v.seqlen_q, v.seqlen_k, v.block_m, v.block_n, v.mask,
                                          DIAGONAL, v.grid, v.heads_kv, v.parts)
              for v in random_views(60, seed=14) if not v.mask.full()]  # diagonal on fixed-length bands
    capped = [v for v in views if v.schedule == DIAGONAL][-30:]  # the tail capped as planners may
    views += [dataclasses.replace(v, tail_cap=(0, 1, 5, diagonal_tail_cap(True, v.items_per_head(), v.grid))[i % 4])
              for i, v in enumerate(capped)]
    assert sum(v.mask.windowed() for v in views) > 30
    stdin = "".join(
        f"sched {v.num_m_blocks} {v.num_n_blocks} {v.heads} {v.heads_kv} {v.batch} {v.seqlen_q} {v.seqlen_k} "
        f"{v.block_m} {v.block_n} {v.mask.left} {v.mask.right} {SCHEDULE_IDS[v.schedule]} {v.grid} {v.parts} "
        f"{v.chunk} {v.tail_cap}\n"
        for v in views)
    out = subprocess.run([str(exe)], input=stdin, capture_output=True, text=True, check=True).stdout.splitlines()
    expected = [line for v in views for line in _python_dump(v)]
    assert len(out) == len(expected)
    for got, want in zip(out, expected):
        assert got == want


def test_locality_term_charges_rounds_that_overflow_l2():
    """Causal ascending in one chunk (as deterministic calls deal it) deals the longest tasks
    of *all* heads first, so a round streams every head's Q and dO; symmetric shift keeps a
    round on a couple of heads."""
    from dash.schedule_sim import round_slowdown
    bytes_per_head = 4.0 * 4096 * 128
    ascending = BwdScheduleView.for_problem(4, 16, 4096, 4096, 64, 128, True, ASCENDING, 132, chunk=ONE_CHUNK)
    symmetric = BwdScheduleView.for_problem(4, 16, 4096, 4096, 64, 128, True, SYMMETRIC_SHIFT, 132)
    assert round_slowdown(ascending, bytes_per_head, 60e6, 0.3)[0] > 1.1
    assert max(round_slowdown(symmetric, bytes_per_head, 60e6, 0.3)) == 1.0
    with_locality = predict(4, 16, 4096, 4096, 128, True, reduce=0.5, miss_cost=0.3)
    assert with_locality["symmetric_shift"][0] < with_locality["descending"][0] < with_locality["ascending"][0]


# ---- the geometry layer: seq_geometry.h / mask.h vs dash/geometry.py ----

def random_geometries(count, seed=0):
    """Random fixed-length and packed geometries: document lengths 0, 1, odd, tile
    multiples and long, unequal q / k lengths, optional seqused, GQA groups; random bands,
    left and right each unbounded (any negative), 0, small, about or beyond the sequence."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        block_m, block_n = rng.choice([(64, 128), (128, 128), (192, 128)])
        heads_kv = rng.randint(1, 4)
        heads = heads_kv * rng.choice([1, 2, 4, 8])
        length = rng.choice([100, 1000, 3000])
        mask = rng.choice([FULL, CAUSAL, MaskWindow(random_bound(rng, length), random_bound(rng, length)),
                           MaskWindow(random_bound(rng, length), random_bound(rng, length)),
                           MaskWindow(rng.choice([-1, -7, 0, 100]), rng.choice([-1, -3, 0, 64]))])
        if rng.random() < 0.25:
            out.append((SeqGeometry.fixed(3, heads, heads_kv, rng.randint(1, 3000), rng.randint(1, 3000), block_m),
                        block_n, mask))
            continue
        batch = rng.randint(1, 6)
        pick = lambda: rng.choice([0, 1, 17, 64, 128, 129, 4097, rng.randint(0, 3000)])  # noqa: E731
        lens_q = [pick() for _ in range(batch)]
        lens_k = [q if rng.random() < 0.5 else pick() for q in lens_q]
        cu_q = [0] + list(itertools.accumulate(lens_q))
        cu_k = [0] + list(itertools.accumulate(lens_k))
        used = rng.random() < 0.3
        used_q = [rng.randint(0, n) for n in lens_q] if used else None
        used_k = [rng.randint(0, n) for n in lens_k] if used else None
        out.append((SeqGeometry.packed(heads, heads_kv, cu_q, cu_k, max(lens_q), max(lens_k), block_m, used_q,
                                       used_k), block_n, mask))
    return out


def _geometry_stdin(geo, block_n, mask):
    used = geo.seqused_q is not None
    if not geo.packed_layout():
        return (f"geo {geo.heads} {geo.heads_kv} 0 {geo.seqlen_q} {geo.seqlen_k} {geo.stats_block} {block_n} "
                f"{mask.left} {mask.right} 0\n")
    fields = [geo.heads, geo.heads_kv, geo.batch, geo.seqlen_q, geo.seqlen_k, geo.stats_block, block_n, mask.left,
              mask.right, int(used), *geo.cu_seqlens_q, *geo.cu_seqlens_k]
    if used:
        fields += [*geo.seqused_q, *geo.seqused_k]
    return "geo " + " ".join(map(str, fields)) + "\n"


def _python_geometry_dump(geo, block_n, mask):
    lines = [f"geo stats_rows={geo.stats_rows} dq_tiles={geo.num_dq_tiles()} batches={geo.tensor_batches()} "
             f"group={geo.group()} kv_tiles={geo.kv_tiles_per_head(block_n)}"]
    heads = range(0, geo.heads, geo.heads - 1) if geo.heads > 1 else range(1)
    for b in range(geo.batch):
        s = geo.seq(b)
        t = seq_tiles(s, geo.stats_block, block_n, mask)
        line = (f"seq {b} lens {s.len_q} {s.len_k} rows {s.row_q} {s.row_k} tb {s.tensor_batch} "
                f"stats {s.stats_row}")
        line += "".join(f" h{h}:{geo.stats_offset(s, h)}:{geo.lse_offset(s, h)}:{geo.dq_tile(s, h, 0)}:"
                        f"kv{geo.kv_head(h)}" for h in heads)
        line += f" kvt {geo.kv_tile(s, 0, 0, block_n)}:{geo.kv_tile(s, geo.heads_kv - 1, 1, block_n)}"
        line += f" m {t.num_m_blocks()} n {t.num_n_blocks()} shift {t.shift()} n_ranges"
        line += "".join(f" {t.n_block_begin(m)}:{t.n_block_end(m)}" for m in range(t.num_m_blocks()))
        line += " m_ranges" + "".join(f" {t.m_block_begin(n)}:{t.m_block_end(n)}" for n in range(t.num_n_blocks()))
        line += " partial" + "".join(str(int(t.partial(m, n))) for m in range(t.num_m_blocks())
                                     for n in range(t.num_n_blocks()))
        e = t.element_mask(t.num_m_blocks() - 1, 0, 3, 5)
        lines.append(line + f" em {e.kv_limit} {e.right_diagonal} {e.left_diagonal}")
    return lines


def test_kernel_geometry_headers_match_python(tmp_path):
    exe = _compile_dump(tmp_path)
    cases = random_geometries(150, seed=5)
    stdin = "".join(_geometry_stdin(*c) for c in cases)
    out = subprocess.run([str(exe)], input=stdin, capture_output=True, text=True, check=True).stdout.splitlines()
    expected = [line for c in cases for line in _python_geometry_dump(*c)]
    assert out == expected
    assert sum(mask.windowed() for _, _, mask in cases) > 50


def test_kernel_mask_window_rules_match_python(tmp_path):
    """make_mask_window (FlashAttention-3's normalization) and the band's kind agree."""
    exe = _compile_dump(tmp_path)
    rng = random.Random(15)
    cases = []
    for _ in range(400):
        seqlen_q = rng.choice([1, 2, 100, rng.randint(1, 5000)])
        seqlen_k = rng.choice([1, 2, 100, rng.randint(1, 5000)])
        cases.append((rng.random() < 0.3, rng.choice([-5, random_bound(rng, seqlen_k)]),
                      rng.choice([-2, random_bound(rng, seqlen_q)]), seqlen_q, seqlen_k))
    stdin = "".join(f"window {int(c)} {left} {right} {sq} {sk}\n" for c, left, right, sq, sk in cases)
    out = subprocess.run([str(exe)], input=stdin, capture_output=True, text=True, check=True).stdout.splitlines()
    expected = []
    for case in cases:
        w = make_mask_window(*case)
        expected.append(f"window {w.left} {w.right} full={int(w.full())} causal={int(w.causal())} "
                        f"windowed={int(w.windowed())} kind={w.kind()}")
    assert out == expected


def test_packed_workspace_rows_never_overlap():
    """Each sequence's padded workspace tiles lie inside the head's rows and after the
    previous sequence's, for any lengths (FlashAttention-3's padded offsets)."""
    for geo, _, _ in random_geometries(300, seed=6):
        if not geo.packed_layout():
            continue
        end = 0
        for b in range(geo.batch):
            s = geo.seq(b)
            assert s.stats_row % geo.stats_block == 0 and s.stats_row >= end
            end = s.stats_row + -(-s.len_q // geo.stats_block) * geo.stats_block
        assert end <= geo.stats_rows


def band_matrix(len_q, len_k, rows, cols, mask):
    """visible[q, k] for q < rows, k < cols (past len_q / len_k: padding), from the band's
    definition element by element."""
    q = np.arange(rows)[:, None]
    k = np.arange(cols)[None, :]
    shift = len_k - len_q
    visible = (k < len_k) & (q >= 0)
    if mask.left >= 0:
        visible = visible & (k >= q + shift - mask.left)
    if mask.right >= 0:
        visible = visible & (k <= q + shift + mask.right)
    return visible


def test_mask_tile_ranges_agree_with_the_element_mask():
    """[n_block_begin, n_block_end), [m_block_begin, m_block_end), partial and element_mask
    are exactly what the element-level band implies: a tile pair is in the ranges iff one of
    its (query, key) pairs is visible (the two ranges agree), a pair not marked partial has
    every entry visible (rows past len_q aside: their results are dropped), unmasked_n_blocks
    is exactly the pairs not marked partial, n_block_end_of_rows bounds what a tile's first rows
    see, and the element mask hides exactly the invisible entries, for any thread offset."""
    rng = random.Random(7)
    windowed = right_edge_only = 0
    for _ in range(300):
        len_q, len_k = rng.choice([1, 2, 63, rng.randint(1, 700)]), rng.choice([1, 2, 65, rng.randint(1, 700)])
        block_m, block_n = rng.choice([(16, 32), (32, 16), (48, 32), (64, 128), (128, 128), (192, 128)])
        if rng.random() < 0.5:
            mask = rng.choice([FULL, CAUSAL, MaskWindow(rng.choice([-1, -4, 0, 5]), rng.choice([-1, -2, 0, 9]))])
        else:
            mask = MaskWindow(random_bound(rng, len_k), random_bound(rng, len_q))
        windowed += mask.windowed()
        t = seq_tiles(SeqGeometry.fixed(1, 1, 1, len_q, len_k, block_m).seq(0), block_m, block_n, mask)
        rows, cols = t.num_m_blocks() * block_m, t.num_n_blocks() * block_n
        visible = band_matrix(len_q, len_k, rows, cols, mask)
        for m, n in itertools.product(range(t.num_m_blocks()), range(t.num_n_blocks())):
            tile = visible[m * block_m:min((m + 1) * block_m, len_q), n * block_n:(n + 1) * block_n]
            in_n_range = t.n_block_begin(m) <= n < t.n_block_end(m)
            in_m_range = t.m_block_begin(n) <= m < t.m_block_end(n)
            assert in_n_range == in_m_range == bool(tile.any()), (len_q, len_k, block_m, block_n, mask, m, n)
            if in_n_range and not t.partial(m, n):
                assert tile.all(), (len_q, len_k, block_m, block_n, mask, m, n)
            lo, hi = t.unmasked_n_blocks(m)  # the forward's three runs: partial, unmasked, partial
            if n == 0:  # the forward's warpgroups: rows [0, r) of the tile see no KV tile past their end
                assert t.n_block_end_of_rows(m, block_m) == t.n_block_end(m)
                for r in {1, block_m // 3, block_m // 2, block_m - 1, rng.randint(1, block_m)}:
                    end = t.n_block_end_of_rows(m, r)
                    rows_seen = visible[m * block_m:min(m * block_m + r, len_q), :]
                    assert not rows_seen[:, end * block_n:].any(), (len_q, len_k, block_m, block_n, mask, m, r)
                    if rows_seen.any():  # and the last tile they reach is one they see
                        assert rows_seen[:, (end - 1) * block_n:end * block_n].any(), (len_q, len_k, mask, m, r)
            if in_n_range:
                assert t.partial(m, n) == (not lo <= n < hi), (len_q, len_k, block_m, block_n, mask, m, n, lo, hi)
        # The element mask of a few tile pairs, from random thread offsets.
        for _ in range(3):
            m, n = rng.randrange(t.num_m_blocks()), rng.randrange(t.num_n_blocks())
            q_offset, kv_offset = rng.randrange(block_m), rng.randrange(block_n)
            e = t.element_mask(m, n, q_offset, kv_offset)
            q0 = np.arange(block_m - q_offset)[:, None]
            kv0 = np.arange(block_n - kv_offset)[None, :]
            banded = not mask.full()
            hidden = (kv0 >= e.kv_limit) | (banded & ((kv0 - q0 > e.right_diagonal) | (kv0 - q0 < e.left_diagonal)))
            want = ~visible[m * block_m + q_offset:(m + 1) * block_m, n * block_n + kv_offset:(n + 1) * block_n]
            assert np.array_equal(hidden, want), (len_q, len_k, block_m, block_n, mask, m, n, q_offset, kv_offset)
            for _ in range(20):  # the formula above is ElementMask.hidden's
                a, b = rng.randrange(block_m - q_offset), rng.randrange(block_n - kv_offset)
                assert e.hidden(banded, a, b) == bool(hidden[a, b])
                if banded and e.right_edge_only(block_m, block_n):  # the forward's one-compare test
                    assert e.right_of_band(a, b) == bool(hidden[a, b])
                    right_edge_only += 1
    assert windowed > 100 and right_edge_only > 100


# ---- packed (variable-length) batches ----

def random_varlen_views(count, seed=0):
    """Packed calls with document lengths 0, 1, odd, tile multiples, long; unequal q / k
    lengths; GQA groups; full, causal and sliding-window masks; the schedules the counter
    deals (diagonal: banded masks only)."""
    rng = random.Random(seed)
    views = []
    for _ in range(count):
        block_m, block_n = rng.choice([(64, 128), (128, 128)])
        batch = rng.randint(1, 7)
        pick = lambda: rng.choice([0, 1, 17, 64, 128, 129, 1000, 2100, rng.randint(0, 2500)])  # noqa: E731
        lens_q = [pick() for _ in range(batch)]
        lens_k = [q if rng.random() < 0.6 else pick() for q in lens_q]
        heads_kv = rng.randint(1, 3)
        heads = heads_kv * rng.choice([1, 2, 4])
        mask = random_mask(rng, max(lens_q), max(lens_k))
        banded = not normalized_mask_window(mask, max(lens_q), max(lens_k)).full()
        schedule = rng.choice([DIAGONAL, DIAGONAL, DESCENDING, ASCENDING]) if banded else ASCENDING
        parts = rng.choice([p for p in (1, 2, 4) if (heads // heads_kv) % p == 0])
        views.append(BwdScheduleView.for_varlen(heads, heads_kv, [0, *itertools.accumulate(lens_q)],
                                                [0, *itertools.accumulate(lens_k)], block_m, block_n, mask,
                                                schedule, rng.choice([1, 5, 33, 132]),
                                                deterministic=rng.random() < 0.5, parts=parts))
    return views


def postprocess_adds(view, batch, m_block):
    """The adds the early postprocess (bwd/prepost.h) waits for on a dQ tile of sequence
    `batch`: n_block_end - n_block_begin of the sequence's tiles, at least 0."""
    tiles = seq_tiles(view.geometry().seq(batch), view.block_m, view.block_n, view.mask)
    return max(tiles.n_block_end(m_block) - tiles.n_block_begin(m_block), 0)


@pytest.mark.parametrize("view", random_views(80, seed=21) + random_varlen_views(60, seed=22), ids=view_id)
def test_postprocess_waits_for_exactly_the_adds_of_each_dq_tile(view):
    """Deterministic calls start the postprocess early: each CTA waits until its dQ tile's
    semaphore counts n_block_end - n_block_begin adds (bwd/prepost.h). That must be every add the
    schedule makes into the tile, for every tile of every sequence (none: zero), or the CTA
    would convert a partial sum or wait forever. The same count decides which tiles the
    postprocess writes as zeros: deterministic calls do not zero dq_accum, their rank-0 partial
    (one a tile: dq_accumulation_orders checks the ranks are 0..k-1) is stored, not added."""
    orders = dq_accumulation_orders(view)
    geo = view.geometry()
    for b in range(view.batch):
        s = geo.seq(b)
        for head in range(view.heads):
            for m in range(-(-s.len_q // view.block_m)):
                assert len(orders.get((b, head, m), [])) == postprocess_adds(view, b, m), (b, head, m)


@pytest.mark.parametrize("view", random_varlen_views(120), ids=view_id)
def test_varlen_orders_cover_each_sequences_tiles_once(view):
    orders = dq_accumulation_orders(view)  # also checks ranks are 0..k-1
    geo = view.geometry()
    for b in range(geo.batch):
        s = geo.seq(b)
        tiles = seq_tiles(s, view.block_m, view.block_n, view.mask)
        for m in range(tiles.num_m_blocks()):
            want = touching_kv_tiles(s.len_q, s.len_k, view.block_m, view.block_n, view.mask, m)
            if view.schedule == DIAGONAL:
                want.reverse()
            for h in range(view.heads):
                assert orders.get((b, h, m), []) == want, f"sequence {b} head {h} Q tile {m}"
    assert {k[0] for k in orders} <= {b for b in range(geo.batch) if geo.seq(b).len_q and geo.seq(b).len_k}


@pytest.mark.parametrize("view", random_varlen_views(120, seed=5), ids=view_id)
def test_varlen_waits_target_smaller_items(view):
    """The counter's deadlock freedom: in every dQ tile's order of a deterministic packed
    call, each partial comes from a smaller item than the next one (schedule.h)."""
    if view.varlen.numbering != bwd_varlen_order(view.schedule, True):
        pytest.skip("a non-deterministic numbering: no waits")
    ranked = {}
    for program in cta_programs(view):
        for task in program:
            for head, m, rank in view.steps(task):
                ranked.setdefault((task.batch, head, m), []).append((rank, task.item))
    for key, adds in ranked.items():
        items = [item for _, item in sorted(adds)]
        assert items == sorted(items) and len(set(items)) == len(items), key


def test_diagonal_partials_arrive_in_order():
    """Tasks of one sequence started together reach each Q tile in rank order: the task of
    KV tile n + 1 sigma steps before the task of KV tile n (so no add waits)."""
    view = BwdScheduleView.for_varlen(2, 2, [0, 1500, 1500 + 777], [0, 1500, 1500 + 777], 64, 128, True, DIAGONAL)
    arrival = {}
    for program in cta_programs(view):
        for task in program:
            for step, (head, m, rank) in enumerate(view.steps(task)):
                arrival.setdefault((task.batch, head, m), []).append((rank, step))
    for key, adds in arrival.items():
        steps = [step for _, step in sorted(adds)]
        assert all(a < b for a, b in zip(steps, steps[1:])), key


@pytest.mark.parametrize("view", random_varlen_views(60, seed=1), ids=view_id)
def test_varlen_no_deadlock_and_every_task_once(view):
    simulate(view, deterministic=view.varlen.numbering == bwd_varlen_order(view.schedule, True))
    geo = view.geometry()
    tasks = sorted((t.batch, t.kv_head, t.part, t.n_block) for program in cta_programs(view) for t in program)
    want = sorted((b, h, p, n) for b in range(geo.batch) for h in range(view.heads_kv) for p in range(view.parts)
                  for n in range(-(-geo.seq(b).len_k // view.block_n)))
    assert tasks == want


# ---- banded masks: every schedule, every grid ----

BANDED_SHAPES = [  # batch, heads, heads_kv, seqlen_q, seqlen_k, block_m, block_n, mask
    (2, 3, 3, 1000, 1000, 64, 128, CAUSAL),
    (1, 4, 2, 1500, 1100, 64, 128, MaskWindow(200, 0)),      # Mistral-style, seqlen_q > seqlen_k
    (2, 2, 1, 900, 1300, 128, 128, MaskWindow(128, 128)),    # HF-style, MQA
    (1, 6, 6, 700, 700, 64, 128, MaskWindow(0, 250)),        # the diagonal and keys right of it
    (3, 2, 2, 640, 640, 64, 128, MaskWindow(1, 1)),          # a band narrower than a tile
    (1, 4, 4, 1200, 1200, 64, 128, MaskWindow(-1, 64)),      # causal shifted right
    (2, 2, 2, 1000, 600, 64, 128, MaskWindow(50, 3)),        # Q tiles that see no key
]


def _check_banded_orders(view, tiles_of):
    """Each dQ tile's partials come from KV tiles [n_block_begin(m), n_block_end(m)) of its
    sequence, with ranks a permutation of 0..count-1 (dq_accumulation_orders checks that)."""
    orders = dq_accumulation_orders(view)
    for (b, h, m), order in orders.items():
        t = tiles_of(b)
        assert sorted(order) == list(range(t.n_block_begin(m), t.n_block_end(m))), (b, h, m)


@pytest.mark.parametrize("shape", BANDED_SHAPES, ids=lambda s: f"b{s[0]}h{s[1]}kv{s[2]}-{s[3]}x{s[4]}-{mask_id(s[7])}")
def test_banded_schedules_rank_and_finish_on_every_grid(shape):
    """Every schedule the planner may run on the band (requested or auto), on every grid up
    to 40 CTAs: the ranks of each dQ tile are a permutation of its partials and the
    all-resident simulation finishes (no wait cycle)."""
    batch, heads, heads_kv, seqlen_q, seqlen_k, block_m, block_n, mask = shape
    checked = 0
    for schedule in (ASCENDING, DESCENDING, FA3_BASELINE, DIAGONAL, SYMMETRIC_SHIFT):
        for grid in range(1, 41):
            view = BwdScheduleView.for_problem(batch, heads, seqlen_q, seqlen_k, block_m, block_n, mask, schedule,
                                               grid, heads_kv)
            if not applies(view):
                continue
            _check_banded_orders(view, lambda b: view.tiles())
            simulate(view)
            checked += 1
    assert checked >= 160


@pytest.mark.parametrize("mask", [CAUSAL, MaskWindow(300, 0), MaskWindow(100, 100), MaskWindow(0, 130),
                                  MaskWindow(-1, 40)], ids=mask_id)
def test_banded_packed_schedules_rank_and_finish_on_every_grid(mask):
    lens_q = [700, 0, 1, 129, 1000, 300]
    lens_k = [700, 5, 1, 300, 1000, 64]
    cu_q, cu_k = [0, *itertools.accumulate(lens_q)], [0, *itertools.accumulate(lens_k)]
    for schedule in (DIAGONAL, ASCENDING, DESCENDING):
        for grid in range(1, 41):
            view = BwdScheduleView.for_varlen(4, 2, cu_q, cu_k, 64, 128, mask, schedule, grid)
            geo = view.geometry()
            _check_banded_orders(view, lambda b: seq_tiles(geo.seq(b), view.block_m, view.block_n, view.mask))
            simulate(view)


def test_windowed_diagonal_partials_arrive_in_order():
    """Fixed length and packed, a sliding window: the tasks of one sequence started together
    reach each Q tile in rank order (so no add waits), as under a causal mask."""
    fixed = BwdScheduleView.for_problem(1, 1, 2000, 2000, 64, 128, MaskWindow(300, 0), DIAGONAL, 132)
    packed = BwdScheduleView.for_varlen(2, 2, [0, 1500, 1500 + 777], [0, 1500, 1500 + 777], 64, 128,
                                        MaskWindow(200, 50), DIAGONAL)
    for view in (fixed, packed):
        arrival = {}
        for program in cta_programs(view):
            for task in program:
                for step, (head, m, rank) in enumerate(view.steps(task)):
                    arrival.setdefault((task.batch, head, m), []).append((rank, step))
        for key, adds in arrival.items():
            steps = [step for _, step in sorted(adds)]
            assert all(a < b for a, b in zip(steps, steps[1:])), key
        assert simulate(view).stall == 0


def test_kernel_varlen_headers_match_python(tmp_path):
    exe = _compile_dump(tmp_path)
    views = random_varlen_views(60, seed=2)
    stdin = "".join(
        f"vsched {v.heads} {v.heads_kv} {v.batch} {v.block_m} {v.block_n} {v.mask.left} {v.mask.right} "
        f"{SCHEDULE_IDS[v.schedule]} {v.grid} {v.varlen.numbering} {v.parts} {' '.join(map(str, v.geo.cu_seqlens_q))} "
        f"{' '.join(map(str, v.geo.cu_seqlens_k))}\n" for v in views)
    out = subprocess.run([str(exe)], input=stdin, capture_output=True, text=True, check=True).stdout.splitlines()
    assert out == [line for v in views for line in _python_dump(v)]


def test_kernel_varlen_tables_match_python(tmp_path):
    """The forward's tables too (Q tiles, query heads, causal slabs from the last tile down)."""
    exe = _compile_dump(tmp_path)
    rng = random.Random(3)
    cases, stdin = [], ""
    for _ in range(80):
        batch = rng.randint(1, 9)
        cu_q = [0, *itertools.accumulate(rng.choice([0, 1, 100, 192, 193, 5000]) for _ in range(batch))]
        cu_k = [0, *itertools.accumulate(rng.randint(0, 3000) for _ in range(batch))]
        block, key_side, units, reverse = rng.choice([64, 128, 192]), rng.random() < 0.5, rng.randint(1, 4), \
            rng.random() < 0.5
        numbering = rng.choice([UNIT_MAJOR, SEQUENCE_MAJOR, SEQUENCE_TILE_MAJOR])
        geo = SeqGeometry.packed(1, 1, cu_q, cu_k, max(b - a for a, b in zip(cu_q, cu_q[1:])),
                                 max(b - a for a, b in zip(cu_k, cu_k[1:])), 64)
        num_slabs = -(-(geo.seqlen_k if key_side else geo.seqlen_q) // block)
        tiles = VarlenTiles.build(geo, block, key_side, num_slabs, units, reverse, numbering)
        cases.append(tiles)
        stdin += (f"vtable {batch} {block} {int(key_side)} {num_slabs} {units} {int(reverse)} {numbering} "
                  f"{' '.join(map(str, cu_q))} {' '.join(map(str, cu_k))}\n")
    out = subprocess.run([str(exe)], input=stdin, capture_output=True, text=True, check=True).stdout.splitlines()
    expected = []
    for tiles in cases:
        expected.append("table" + "".join(f" {x}" for x in tiles.table()))
        items = [tiles.locate(i) for i in range(tiles.num_items)]
        expected.append("items" + "".join(f" {it.tile}:{it.batch}:{it.unit}"
                                          for it in items))
    assert out == expected


def test_gqa_design_model():
    """The group walk matches its non-deterministic bound (no waits: MHA ranks); when its
    tasks cannot fill the grid (MQA, one sequence), splitting the group wins in the model."""
    from dash.schedule_sim import compare_gqa_designs
    mqa = compare_gqa_designs(1, 8, 1, 2048, 128, True, grid=64)
    assert mqa["group_walk"][0] == pytest.approx(mqa["non-deterministic"][0])
    assert mqa["group_walk"][1] == 0
    assert mqa["split_4_ordered_dkv"][0] < 0.8 * mqa["group_walk"][0]


# ---- split query-head groups (GQA / MQA, parts > 1) ----

@pytest.mark.parametrize("view", [v for v in random_views(300, seed=11) + random_varlen_views(200, seed=12)
                                  if v.parts > 1][:80], ids=view_id)
def test_split_groups_cover_each_head_once(view):
    """Parts walk disjoint slices of their group (together every query head, once); their
    dK / dV partials are summed after the main kernel, so the split adds no wait."""
    heads_of = {}
    items_of = {}
    for program in cta_programs(view):
        for task in program:
            key = (task.batch, task.kv_head, task.n_block, task.member)
            heads_of.setdefault(key, []).extend(h for h, _, _ in view.steps(task)[:view.group()] or
                                                [(view.q_head(task, s), 0, 0) for s in range(view.group())])
            items_of.setdefault((task.batch, task.kv_head, task.n_block), {})[task.part] = task.item
    group = view.heads // view.heads_kv
    for (b, kv, n, member), heads in heads_of.items():
        assert sorted(heads) == list(range(kv * group, (kv + 1) * group)), (b, kv, n, member)
    for key, parts in items_of.items():
        assert sorted(parts) == list(range(view.parts)), key
    deterministic = not view.packed() or view.varlen.numbering == bwd_varlen_order(view.schedule, True)
    simulate(view, deterministic=deterministic)


def test_kernel_kv_parts_rule_matches_python(tmp_path):
    """The planner's split rule (schedule.h walk_step_limit, kv_parts_for) and its Python
    mirror agree."""
    from dash.schedule import GroupSplitTraits, kv_parts_fill_grid, kv_parts_for, kv_parts_minimum, walk_step_limit
    exe = _compile_dump(tmp_path)
    rng = random.Random(13)
    cases = [(rng.choice([1, 7, 64, 131, 512, rng.randint(1, 5000)]), rng.choice([1, 2, 3, 4, 6, 8, 12, 16, 32]),
              rng.choice([12, 66, 132, 264]), rng.randint(0, 300), rng.random() < 0.5, rng.random() < 0.5,
              rng.random() < 0.5, GroupSplitTraits(rng.choice([64, 64, 128]), rng.choice([0, 0, 64, 256]),
                                                   rng.choice([0, 0, 64]), rng.choice([1, 1, 2, 4]),
                                                   rng.choice([512, 512, 64, 128])))
             for _ in range(400)]
    stdin = "".join(f"kvparts {i} {g} {r} {m} {int(p)} {int(d)} {int(f)} {t.det_band_walk_steps} "
                    f"{t.nondet_band_walk_steps} {t.nondet_full_walk_steps} {t.band_min_parts} "
                    f"{t.det_full_walk_steps}\n"
                    for i, g, r, m, p, d, f, t in cases)
    out = subprocess.run([str(exe)], input=stdin, capture_output=True, text=True, check=True).stdout.splitlines()
    expected = []
    for i, g, r, m, p, d, f, t in cases:
        limit = walk_step_limit(p, d, f, t)
        parts = kv_parts_for(i, g, r, m, limit, kv_parts_fill_grid(p, d), kv_parts_minimum(p, f, t))
        expected.append(f"parts {parts} limit {limit}")
    assert out == expected


def test_kernel_deal_chunk_rule_matches_python(tmp_path):
    """The dealing chunk of full-mask ascending (schedule.h deal_chunk_for) and its mirror agree."""
    from dash.schedule import deal_chunk_for
    exe = _compile_dump(tmp_path)
    rng = random.Random(14)
    cases = []
    for _ in range(200):
        s = rng.choice([1, 64, 500, 512, 1024, 4096, 16384, 131072, rng.randint(1, 40000)])
        hd = rng.choice([64, 96, 128, 192, 256])
        cases.append((s, -(-s // rng.choice([64, 80, 128])), hd, rng.choice([hd, 128]), rng.choice([1, 2, 4, 16]),
                      rng.choice([1, 1, 2, 4, 8])))
    stdin = "".join("chunk " + " ".join(map(str, c)) + "\n" for c in cases)
    out = subprocess.run([str(exe)], input=stdin, capture_output=True, text=True, check=True).stdout.splitlines()
    assert out == [f"chunk {deal_chunk_for(*c)}" for c in cases]


def test_kernel_band_deal_chunk_rule_matches_python(tmp_path):
    """The dealing chunk of banded ascending (schedule.h band_deal_chunk_for) and its mirror agree."""
    from dash.schedule import band_deal_chunk_for
    exe = _compile_dump(tmp_path)
    rng = random.Random(17)
    cases = []
    for _ in range(200):
        hd = rng.choice([64, 96, 128, 192, 256])
        cases.append((rng.choice([1, 64, 500, 2048, 4096, 16384, 131072, rng.randint(1, 40000)]), hd,
                      rng.choice([hd, 128]), rng.choice([1, 2, 4, 16]), rng.choice([0, 1])))
    stdin = "".join("bandchunk " + " ".join(map(str, c)) + "\n" for c in cases)
    out = subprocess.run([str(exe)], input=stdin, capture_output=True, text=True, check=True).stdout.splitlines()
    assert out == [f"bandchunk {band_deal_chunk_for(*c)}" for c in cases]


def test_kernel_diagonal_tail_cap_matches_python(tmp_path):
    """The longest tail diagonal deals longest first (schedule.h diagonal_tail_cap) and its mirror agree."""
    exe = _compile_dump(tmp_path)
    cases = [(det, ipb, grid) for det in (0, 1) for ipb in (1, 7, 16, 64, 100, 128, 256, 1024)
             for grid in (1, 2, 50, 131, 132)]
    stdin = "".join("tailcap " + " ".join(map(str, c)) + "\n" for c in cases)
    out = subprocess.run([str(exe)], input=stdin, capture_output=True, text=True, check=True).stdout.splitlines()
    assert out == [f"tailcap {diagonal_tail_cap(bool(d), ipb, grid)}" for d, ipb, grid in cases]


def test_diagonal_tail_cap_rule():
    """A deterministic tail reverses at most half the grid or 5/8 of a head's items (RESULTS item 321); one
    whose adds never wait, all of tail_items' (grid - 1 past the first grid draws)."""
    assert [diagonal_tail_cap(True, ipb, 132) for ipb in (16, 32, 64, 128, 256)] == [66, 66, 66, 80, 160]
    assert diagonal_tail_cap(False, 128, 132) == 132
    view = BwdScheduleView.for_problem(1, 16, 16384, 16384, 64, 128, True, DIAGONAL, 132)
    assert view.tail_items() == 131
    assert dataclasses.replace(view, tail_cap=diagonal_tail_cap(True, 128, 132)).tail_items() == 80
    long = BwdScheduleView.for_problem(1, 16, 32768, 32768, 64, 128, True, DIAGONAL, 132)
    assert dataclasses.replace(long, tail_cap=diagonal_tail_cap(True, 256, 132)).tail_items() == 131


def test_band_deal_chunk_rule():
    """Non-deterministic banded ascending deals FlashAttention-3's sections: the walks whose Q,
    dO and fp32 dQ accumulator fit 40 MB, a power of two; deterministic calls one chunk."""
    from dash.schedule import ONE_CHUNK, band_deal_chunk_for
    # hdim 128: 16 MB a walk at 16k -> 2; 2 MB at 2k -> 16 (of 20). hdim 64: 8 MB at 16k -> 4 (of 5).
    assert [band_deal_chunk_for(s, 128, 128, 1, False) for s in (2048, 4096, 8192, 16384, 65536)] == [16, 8, 4, 2, 1]
    assert [band_deal_chunk_for(s, 64, 64, 1, False) for s in (2048, 16384)] == [32, 4]
    assert band_deal_chunk_for(16384, 128, 128, 4, False) == 1  # GQA walks of 4 query heads: 64 MB
    assert band_deal_chunk_for(1, 64, 64, 1, False) == 65536  # 512 bytes a walk: any batch in one chunk
    assert band_deal_chunk_for(16384, 128, 128, 1, True) == ONE_CHUNK


def test_deal_chunk_rule():
    """About 128 items per chunk (one grid's worth), within 8 MB of Q and dO: the sweep's
    optimum at every point of the usual grid (RESULTS item 63)."""
    from dash.schedule import deal_chunk_for
    assert [deal_chunk_for(s, s // 128, 128, 128, 1) for s in (512, 1024, 2048, 4096, 8192, 16384)] == \
        [32, 16, 8, 4, 2, 1]
    assert [deal_chunk_for(s, s // 128, 64, 64, 1) for s in (512, 1024, 2048, 4096, 8192, 16384)] == \
        [32, 16, 8, 4, 2, 1]
    assert deal_chunk_for(512, 4, 128, 128, 16) == 2     # walks of 16 query heads (4 MB each): the bytes bound
    assert deal_chunk_for(131072, 1024, 256, 256, 1) == 1  # never below one walk
    # split groups (192, groups of 4, 96-key tiles): at least 4 walks, within 32 MB
    assert deal_chunk_for(2048, 22, 192, 192, 2, 2) == 4     # 3 MB walks: 2 by the 8 MB bound, 4 by the floor
    assert deal_chunk_for(4096, 43, 192, 192, 1, 4) == 4
    assert deal_chunk_for(1024, 11, 64, 64, 1, 8) == 11      # short walks: the unsplit rule (128 items) is wider
    assert deal_chunk_for(16384, 171, 192, 192, 1, 4) == 2   # 12.6 MB walks: the 32 MB bound
    assert deal_chunk_for(16384, 128, 128, 128, 2, 2) == 2   # Llama at 16k, split in 2: 16 MiB walks


def test_kv_parts_rule():
    from dash._traits import GROUP_SPLIT_DEFAULTS, GROUP_SPLIT_TRAITS
    from dash.schedule import (GroupSplitTraits, group_split_traits, kv_parts_fill_grid, kv_parts_for,
                               kv_parts_minimum, walk_step_limit)
    # fixed length, not deterministic: the grid decides where the group walks cannot fill it
    assert kv_parts_fill_grid(False, False) and not kv_parts_fill_grid(True, False)
    assert not kv_parts_fill_grid(False, True)
    # measured per head dim (RESULTS items 152, 155): hdim 64 ran slower split, 96 no faster;
    # full masks split only at 192 and 192 / 128
    assert GROUP_SPLIT_DEFAULTS == {"det_band_walk_steps": 64, "nondet_band_walk_steps": 0,
                                    "nondet_full_walk_steps": 0, "band_min_parts": 1, "det_full_walk_steps": 512}
    assert GROUP_SPLIT_TRAITS == {
        (128, 128): {"nondet_band_walk_steps": 256},
        (192, 128): {"nondet_band_walk_steps": 64, "nondet_full_walk_steps": 64, "band_min_parts": 2,
                     "det_full_walk_steps": 64},
        (192, 192): {"nondet_band_walk_steps": 64, "nondet_full_walk_steps": 64, "band_min_parts": 2,
                     "det_full_walk_steps": 64},
        (256, 256): {"det_band_walk_steps": 128, "nondet_band_walk_steps": 128, "band_min_parts": 2}}
    assert group_split_traits(128) == GroupSplitTraits(64, 256, 0, 1, 512)
    assert group_split_traits(256) == GroupSplitTraits(128, 128, 0, 2, 512)
    assert group_split_traits(192, 128) == group_split_traits(192) == GroupSplitTraits(64, 64, 64, 2, 64)
    assert group_split_traits(64) == GroupSplitTraits() == GroupSplitTraits(64, 0, 0, 1, 512)
    # deterministic full masks: walks of up to 512 steps (ascending runs best long), 64 at 192
    assert {p: walk_step_limit(False, True, True, group_split_traits(*p)) for p in GROUP_SPLIT_TRAITS} == \
        {(128, 128): 512, (192, 128): 64, (192, 192): 64, (256, 256): 512}
    t128, t256 = group_split_traits(128), group_split_traits(256)
    nd_band, nd_full = walk_step_limit(False, False, False, t128), walk_step_limit(False, False, True, t128)
    assert (nd_band, nd_full) == (256, 0)
    assert walk_step_limit(False, False, False) == 0
    assert walk_step_limit(False, True, False, t128) == walk_step_limit(False, True, False) == 64
    assert kv_parts_minimum(False, False, t256) == 2
    assert kv_parts_minimum(True, False, t256) == kv_parts_minimum(False, True, t256) == 1  # packed, full: none
    # 256, groups of 4, causal (bwd tile 64 x 64): 2 parts at 1k-4k, 4 from 8k, in both modes
    for q_tiles, parts in ((16, 2), (32, 2), (64, 2), (128, 4), (256, 4)):
        for det in (False, True):
            assert kv_parts_for(1024, 4, 132, q_tiles, walk_step_limit(False, det, False, t256), not det,
                                kv_parts_minimum(False, False, t256)) == parts
    # 192 (tile 64 x 96): 2 parts at 1k-2k, 4 from 4k; full masks the same from 2k in both modes
    # (items at 2k: 22 KV tiles x 4 KV heads x batch 8; bwd_det_full_walk_steps 64)
    assert [kv_parts_for(684, 4, 132, q, 64, True, 2) for q in (16, 32, 64, 256)] == [2, 2, 4, 4]
    t192 = group_split_traits(192)
    assert [kv_parts_for(704, 4, 132, q, walk_step_limit(False, False, True, t192), True,
                         kv_parts_minimum(False, True, t192)) for q in (32, 64, 256)] == [2, 4, 4]
    assert [kv_parts_for(704, 4, 132, q, walk_step_limit(False, True, True, t192), False,
                         kv_parts_minimum(False, True, t192)) for q in (32, 64, 128, 256)] == [2, 4, 4, 4]
    assert kv_parts_for(64, 16, 132, 256, nd_band, True) == 8   # MQA 16k causal: 64 symmetric-shift pairs -> 3 rounds
    assert kv_parts_for(8, 16, 132, 4, nd_full, True) == 16     # tiny problems split as far as the group allows
    assert kv_parts_for(100, 1, 132, 256, nd_band, True) == 1   # MHA never splits
    assert kv_parts_for(20, 6, 132, 0, nd_full, True) == 2      # halves only while the group divides
    # ... and where they fill it, bands split by a walk of 256 steps (Llama 32/8, bwd tile 64 x 128):
    assert kv_parts_for(512, 4, 132, 32, nd_band, True) == 1    # causal 2k: 128 steps
    assert kv_parts_for(512, 4, 132, 64, nd_band, True) == 1    # causal 4k: 256 steps
    assert kv_parts_for(256, 4, 132, 128, nd_band, True) == 2   # causal 8k: 512 steps
    assert kv_parts_for(256, 4, 132, 256, nd_band, True) == 4   # causal 16k: 1024 steps
    assert kv_parts_for(1024, 4, 132, 256, nd_full, True) == 1  # full masks never
    assert kv_parts_for(1024, 4, 132, 128, 0, True) == 1        # nor bands of head dims without the trait (hdim 64)
    packed = walk_step_limit(True, True, False)
    assert packed == walk_step_limit(True, False, True) == 128
    assert kv_parts_for(1112, 4, 132, 61, packed) == 2   # packed GQA, documents up to 3.9k tokens
    assert kv_parts_for(1112, 4, 132, 15, packed) == 1   # packed GQA, documents up to 1k tokens
    assert kv_parts_for(8, 4, 132, 15, packed) == 1      # packed: never the grid
    # deterministic, fixed length: the walk's length and the mask alone (not the grid, batch, heads)
    band, full = walk_step_limit(False, True, False), walk_step_limit(False, True, True)
    assert {kv_parts_for(i, 16, r, 256, band) for i in (8, 64, 5000) for r in (1, 112, 132)} == {16}
    assert {kv_parts_for(i, 4, r, 8, band) for i in (1, 8, 5000) for r in (1, 132)} == {1}
    assert kv_parts_for(512, 4, 132, 32, band) == 2    # Llama 32/8 causal at 2k (bwd tile 64 x 128): 128 steps
    assert kv_parts_for(512, 4, 132, 128, band) == 4   # ... at 8k: 512 steps
    assert kv_parts_for(512, 4, 132, 128, full) == 1   # Llama full at 8k runs unsplit
    assert kv_parts_for(128, 16, 132, 256, full) == 8  # MQA full at 16k: 4096 steps, split to 512


def _invariant_view(batch, heads, heads_kv, seqlen_q, seqlen_k, block_m, block_n, mask, grid, head_dim=128):
    """What deterministic `auto` runs (bwd_plan.cpp): the schedule, split and dealing chunk
    from the shape alone, on `grid` CTAs."""
    from dash.schedule import (deal_chunk_for, deterministic_auto_schedule, group_split_traits, kv_parts_for,
                               kv_parts_minimum, walk_step_limit)
    window = normalized_mask_window(mask, seqlen_q, seqlen_k)
    group = heads // heads_kv
    traits = group_split_traits(head_dim)
    parts = kv_parts_for(0, group, grid, -(-seqlen_q // block_m), walk_step_limit(False, True, window.full(), traits),
                         False, kv_parts_minimum(False, window.full(), traits))
    schedule = deterministic_auto_schedule(window)
    chunk = (deal_chunk_for(seqlen_q, -(-seqlen_k // block_n), head_dim, head_dim, group // parts, parts)
             if schedule == ASCENDING else 1)
    return BwdScheduleView.for_problem(batch, heads, seqlen_q, seqlen_k, block_m, block_n, window, schedule, grid,
                                       heads_kv, parts, chunk)


def _walks(view):
    """Every task's walk: (batch, K/V head, part, KV tile) -> its (query head, Q tile, rank) steps."""
    return {(t.batch, t.kv_head, t.part, t.n_block): view.steps(t) for program in cta_programs(view) for t in program}


def _one_head_orders(view, batch, kv_head):
    """The dQ orders and walks of one (sequence, K/V head) problem, keyed in `view`'s coordinates."""
    group = view.heads // view.heads_kv
    orders = {(batch, kv_head * group + h, m): order for (_, h, m), order in dq_accumulation_orders(view).items()}
    walks = {(batch, kv_head, part, n): [(kv_head * group + h, m, r) for h, m, r in steps]
             for (_, _, part, n), steps in _walks(view).items()}
    return orders, walks


@pytest.mark.parametrize("seed", range(12))
def test_invariant_orders_depend_on_the_shape_alone(seed):
    """Property (issue 14): under deterministic `auto`, every dQ tile's order of adds and
    every task's walk (hence every dK / dV sum) are the same on every grid of 1..132 CTAs,
    and equal those of each (sequence, K/V head) computed alone; every grid finishes."""
    rng = random.Random(100 + seed)
    block_m, block_n = rng.choice([(64, 128), (128, 128)])
    seqlen_q = rng.choice([1, 130, 700, 1000, 2048, rng.randint(1, 3000)])
    seqlen_k = rng.choice([seqlen_q, seqlen_q, rng.randint(1, 3000)])
    mask = rng.choice([FULL, CAUSAL, random_mask(rng, seqlen_q, seqlen_k)])
    batch, heads_kv, group = rng.randint(1, 3), rng.randint(1, 3), rng.choice([1, 2, 4, 8])
    heads = heads_kv * group
    shape = (batch, heads, heads_kv, seqlen_q, seqlen_k, block_m, block_n, mask)
    want = _invariant_view(*shape, 132)
    want_orders, want_walks = dq_accumulation_orders(want), _walks(want)
    alone_orders, alone_walks = {}, {}
    for b, kvh in itertools.product(range(batch), range(heads_kv)):
        one = _invariant_view(1, group, 1, seqlen_q, seqlen_k, block_m, block_n, mask, rng.choice([1, 7, 132]))
        orders, walks = _one_head_orders(one, b, kvh)
        alone_orders.update(orders)
        alone_walks.update(walks)
    assert want_orders == alone_orders and want_walks == alone_walks
    for grid in range(1, 133):
        view = _invariant_view(*shape, grid)
        assert dq_accumulation_orders(view) == want_orders, f"grid {grid}"
        assert _walks(view) == want_walks, f"grid {grid}"
        simulate(view)  # raises Deadlock
        simulate(view, counter=True)  # dealt from the counter, as the kernel does


def test_shift_orders_depend_on_the_grid():
    """The control: shift's orders change with the grid (why it is the opt-in)."""
    views = [BwdScheduleView.for_problem(2, 8, 2048, 2048, 64, 128, FULL, SHIFT, grid) for grid in (132, 112, 7)]
    orders = [dq_accumulation_orders(v) for v in views]
    assert orders[0] != orders[1] and orders[0] != orders[2]


def test_counter_dealing_in_the_model():
    """The simulator's counter dealing (draws in item order a few steps before a task ends,
    as the producer does): a diagonal head's tasks then start about together and never
    wait (makespan = the non-deterministic one), while static rounds of the same order
    stall; and the GQA walk's long last task is the counter's tail, which splitting the
    group shortens (RESULTS item 64). Its tail dealt longest first waits a little (a tail task
    on the one drawn after it) and ends no later."""
    view = BwdScheduleView.for_problem(8, 16, 2048, 2048, 64, 128, CAUSAL, DIAGONAL, 132)
    counter = simulate(view, 1.0, 0.5, handoff=0.5, counter=True, tail=False)
    assert counter.stall == 0
    assert counter.makespan == simulate(view, 1.0, 0.5, deterministic=False, counter=True, tail=False).makespan
    tail = simulate(view, 1.0, 0.5, handoff=0.5, counter=True, tail=True)
    assert 0 < tail.stall and tail.makespan <= counter.makespan
    assert tail.makespan == simulate(view, 1.0, 0.5, deterministic=False, counter=True, tail=True).makespan
    assert simulate(view, 1.0, 0.5, handoff=0.5).makespan > 1.2 * counter.makespan
    spans = [simulate(BwdScheduleView.for_problem(8, 32, 2048, 2048, 64, 128, CAUSAL, DIAGONAL, 132, 8, parts),
                      1.0, 0.5, handoff=0.5, counter=True).makespan for parts in (1, 2, 4)]
    assert spans[0] > spans[1] > spans[2]


@pytest.mark.parametrize("shape", [(1, 16, 16384, CAUSAL), (2, 3, 4097, CAUSAL), (1, 4, 3000, MaskWindow(700, 0)),
                                   (3, 2, 1000, MaskWindow(300, 300)), (1, 8, 2048, CAUSAL)])
def test_diagonal_tail_is_dealt_longest_first_and_finishes_on_every_grid(shape):
    """Diagonal's tail (the last grid - 1 items past the first grid, each head's share of them in reverse): a
    permutation of the tail's items, KV tile 0 first within a head (the longest walk first on a
    causal mask), whose waits (on KV
    tile n + 1 of the same head) target items outside the tail or drawn after it; the same dQ
    orders as without it (the dealing is all it changes), and with every CTA resident and a
    tail task drawing its successor only once its adds are done (bwd/producer.h) the launch
    finishes on any grid."""
    batch, heads, seqlen, mask = shape
    for grid in (1, 2, 3, 7, 31, 132):
        view = BwdScheduleView.for_problem(batch, heads, seqlen, seqlen, 64, 128, mask, DIAGONAL, grid)
        n, tail = view.num_items(), view.tail_items()
        assert tail == max(0, min(view.grid - 1, n - view.grid))  # none of the first grid draws
        dealt = [view.tail_item(d) for d in range(n - tail, n)]
        assert sorted(dealt) == list(range(n - tail, n))
        position = {item: i for i, item in enumerate(dealt)}
        for item in dealt:
            task = view.task(item, 0)
            successor = [i for i in range(n) if view.task(i, 0).n_block == task.n_block + 1
                         and (view.task(i, 0).batch, view.task(i, 0).kv_head) == (task.batch, task.kv_head)]
            for s in successor:
                assert s not in position or position[s] > position[item]
            same_head_later = [i for i in dealt[position[item] + 1:] if view.task(i, 0).kv_head == task.kv_head
                               and view.task(i, 0).batch == task.batch]
            assert all(view.task(i, 0).n_block > task.n_block for i in same_head_later)  # KV tile 0 first
            if mask == CAUSAL:
                assert all(view.num_q_tiles(view.task(i, 0)) <= view.num_q_tiles(task) for i in same_head_later)
        for deterministic in (True, False):
            result = simulate(view, 1.0, 0.3, handoff=0.3, counter=True, deterministic=deterministic, tail=True)
            assert result.makespan > 0
        assert dq_accumulation_orders(view) == dq_accumulation_orders(view)  # static dealing unaffected
