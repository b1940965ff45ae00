"""CPU: the schedule model (dash/schedule.py) is valid on many shapes and agrees exactly
with the kernel's definition (csrc/kernels/schedule.h, compiled here for the host)."""
import itertools
import pathlib
import random
import shutil
import subprocess

import pytest

from dash.schedule import (ASCENDING, DESCENDING, FA3_BASELINE, SCHEDULE_IDS, SCHEDULES, SHIFT, SYMMETRIC_SHIFT,
                           BwdScheduleView, applies, cta_programs, dq_accumulation_orders, shift_applies,
                           symmetric_shift_applies)
from dash.schedule_sim import Deadlock, predict, simulate

ROOT = pathlib.Path(__file__).resolve().parents[1]


def random_views(count, seed=0):
    """Random shapes and grids under every schedule (a schedule whose preconditions fail
    is replaced by the planner's fallback, as the kernel would run it)."""
    rng = random.Random(seed)
    views = []
    for _ in range(count):
        block_m, block_n = rng.choice([(64, 128), (128, 128)])
        seqlen_q = rng.choice([1, 17, 113, 300, 1000, 2048, 4097, rng.randint(1, 5000)])
        seqlen_k = rng.choice([seqlen_q, seqlen_q, rng.randint(1, 5000)])
        causal = rng.random() < 0.5
        schedule = rng.choice(SCHEDULES)
        grid = rng.choice([1, 3, 7, 16, 33, 132])
        batch, heads = rng.randint(1, 3), rng.randint(1, 5)
        view = BwdScheduleView.for_problem(batch, heads, seqlen_q, seqlen_k, block_m, block_n, causal, schedule, grid)
        if not applies(view):
            fallback = DESCENDING if causal else ASCENDING
            view = BwdScheduleView.for_problem(batch, heads, seqlen_q, seqlen_k, block_m, block_n, causal, fallback, grid)
        views.append(view)
    return views


def view_id(v):
    return f"{v.schedule}-{'c' if v.causal else 'f'}-g{v.grid}-m{v.num_m_blocks}-n{v.num_n_blocks}"


def touching_kv_tiles(view, m_block):
    """KV tiles whose keys some query of Q tile m_block sees (bottom-right causal)."""
    tiles = []
    for n in range(view.num_n_blocks):
        if not view.causal:
            tiles.append(n)
            continue
        last_query = min((m_block + 1) * view.block_m, view.seqlen_q) - 1
        if n * view.block_n <= last_query + view.seqlen_k - view.seqlen_q:
            tiles.append(n)
    return tiles


@pytest.mark.parametrize("view", random_views(200), ids=view_id)
def test_orders_cover_touching_tiles_once(view):
    orders = dq_accumulation_orders(view)  # also checks ranks are 0..k-1
    for b, h, m in itertools.product(range(view.batch), range(view.heads), range(view.num_m_blocks)):
        want = touching_kv_tiles(view, m)
        got = orders.get((b, h, m), [])
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
        tasks = sorted((t.batch, t.head, t.n_block) for program in cta_programs(view) for t in program)
        assert tasks == sorted(itertools.product(range(view.batch), range(view.heads), range(view.num_n_blocks)))


def test_groups_touch_distinct_q_tiles_at_every_step():
    """Shift and symmetric shift: in a round, the CTAs working on one head are never on the
    same Q tile at the same step (counting a symmetric pair's steps across both tiles)."""
    checked = 0
    for view in random_views(300, seed=3):
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
                    line += [(task.batch, task.head, view.q_tile_at(task, s)) for s in range(view.num_steps(task))]
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
    view = BwdScheduleView.for_problem(1, 16, 16384, 16384, 64, 128, True, ASCENDING, 132)
    loads = [sum(view.num_steps(t) for t in program) for program in cta_programs(view)]
    assert max(loads) / (sum(loads) / len(loads)) < 1.01


def test_fa3_baseline_deals_head_by_head_in_kv_tile_order():
    view = BwdScheduleView.for_problem(2, 3, 1000, 1000, 64, 128, True, FA3_BASELINE, 7)
    n = view.num_n_blocks
    for item in range(view.num_items()):
        task = view.task(item, 0)
        assert (task.batch * view.heads + task.head, task.n_block) == divmod(item, n)
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
                BwdScheduleView.for_problem(1, 2, 1100, 1100, 64, 128, True, SYMMETRIC_SHIFT, 132)):  # 9 KV tiles
        assert not symmetric_shift_applies(bad)


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
    main(["--seqlen", "1024", "--causal", "--grid", "16", "--gantt", str(png)])
    assert png.stat().st_size > 10_000


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
    lines = [f"case shift={int(shift_applies(view))} symmetric={int(symmetric_shift_applies(view))}"]
    for cta, program in enumerate(cta_programs(view)):
        for ordinal, task in enumerate(program):
            walk, ranks = view.q_walk(task), view.task_ranks(task)
            steps = "".join(f" {walk.at(s)}:{ranks.at(walk.at(s))}" for s in range(view.num_steps(task)))
            lines.append(f"cta {cta} #{ordinal} item {task.item} member {task.member} n {task.n_block} "
                         f"h {task.head} b {task.batch} steps{steps}")
    return lines


def test_kernel_schedule_header_matches_python_model(tmp_path):
    exe = _compile_dump(tmp_path)
    views = random_views(160, seed=4) + [
        BwdScheduleView.for_problem(1, 1, 256, 512, 64, 128, False, SHIFT, 4),
        BwdScheduleView.for_problem(2, 3, 4097, 4097, 64, 128, True, ASCENDING, 132),
        BwdScheduleView.for_problem(1, 2, 300, 1000, 128, 128, True, DESCENDING, 5),
        BwdScheduleView.for_problem(2, 3, 4096, 4096, 64, 128, True, SYMMETRIC_SHIFT, 132),
        BwdScheduleView.for_problem(1, 5, 2048, 2048, 64, 128, True, SYMMETRIC_SHIFT, 7),
    ]
    stdin = "".join(
        f"{v.num_m_blocks} {v.num_n_blocks} {v.heads} {v.batch} {v.seqlen_q} {v.seqlen_k} {v.block_m} "
        f"{v.block_n} {int(v.causal)} {SCHEDULE_IDS[v.schedule]} {v.grid}\n" for v in views)
    out = subprocess.run([str(exe)], input=stdin, capture_output=True, text=True, check=True).stdout.splitlines()
    expected = [line for v in views for line in _python_dump(v)]
    assert len(out) == len(expected)
    for got, want in zip(out, expected):
        assert got == want


def test_locality_term_charges_rounds_that_overflow_l2():
    """Causal ascending deals the longest tasks of *all* heads first, so a round streams
    every head's Q and dO; symmetric shift keeps a round on a couple of heads."""
    from dash.schedule_sim import round_slowdown
    bytes_per_head = 4.0 * 4096 * 128
    ascending = BwdScheduleView.for_problem(4, 16, 4096, 4096, 64, 128, True, ASCENDING, 132)
    symmetric = BwdScheduleView.for_problem(4, 16, 4096, 4096, 64, 128, True, SYMMETRIC_SHIFT, 132)
    assert round_slowdown(ascending, bytes_per_head, 60e6, 0.3)[0] > 1.1
    assert max(round_slowdown(symmetric, bytes_per_head, 60e6, 0.3)) == 1.0
    with_locality = predict(4, 16, 4096, 4096, 128, True, reduce=0.5, miss_cost=0.3)
    assert with_locality["symmetric_shift"][0] < with_locality["descending"][0] < with_locality["ascending"][0]
