"""CPU: the schedule model (dash/schedule.py) is valid on many shapes and agrees exactly
with the kernel's definition (csrc/kernels/schedule.h, compiled here for the host)."""
import itertools
import pathlib
import random
import shutil
import subprocess

import pytest

from dash.schedule import ASCENDING, SHIFT, BwdScheduleView, cta_programs, dq_accumulation_orders, shift_applies

ROOT = pathlib.Path(__file__).resolve().parents[1]


def random_views(count, seed=0):
    rng = random.Random(seed)
    views = []
    for _ in range(count):
        block_m, block_n = rng.choice([(64, 128), (128, 128)])
        seqlen_q = rng.choice([1, 17, 113, 300, 1000, 2048, 4097, rng.randint(1, 5000)])
        seqlen_k = rng.choice([seqlen_q, rng.randint(1, 5000)])
        causal = rng.random() < 0.5
        schedule = rng.choice([ASCENDING, SHIFT])
        grid = rng.choice([1, 3, 7, 16, 33, 132])
        view = BwdScheduleView.for_problem(rng.randint(1, 3), rng.randint(1, 5), seqlen_q, seqlen_k, block_m, block_n,
                                           causal, ASCENDING, grid)
        if schedule == SHIFT and shift_applies(view):
            view = BwdScheduleView.for_problem(view.batch, view.heads, seqlen_q, seqlen_k, block_m, block_n, causal,
                                               SHIFT, grid)
        views.append(view)
    return views


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


def simulate(view):
    """Runs every CTA's program with all CTAs resident: a CTA may add into a dQ tile only
    when the tile's semaphore equals its rank. Returns the number of scheduler sweeps;
    raises on deadlock (no CTA can move)."""
    programs = cta_programs(view)
    position = [(0, 0)] * view.grid  # (task index in program, step)
    semaphore = {}
    sweeps = 0
    while True:
        moved = False
        done = True
        for cta, program in enumerate(programs):
            k, step = position[cta]
            while k < len(program) and step >= view.num_steps(program[k]):
                k, step = k + 1, 0
            position[cta] = (k, step)
            if k == len(program):
                continue
            done = False
            task = program[k]
            m = view.q_tile_at(task, step)
            tile = view.dq_tile_index(task, m)
            if semaphore.get(tile, 0) == view.dq_rank(task, m):
                semaphore[tile] = semaphore.get(tile, 0) + 1
                position[cta] = (k, step + 1)
                moved = True
        if done:
            return sweeps
        if not moved:
            raise AssertionError(f"deadlock in {view}")
        sweeps += 1


@pytest.mark.parametrize("view", random_views(150), ids=lambda v: f"{v.schedule}-g{v.grid}-m{v.num_m_blocks}-n{v.num_n_blocks}")
def test_orders_cover_touching_tiles_once(view):
    orders = dq_accumulation_orders(view)  # also checks ranks are 0..k-1
    for b, h, m in itertools.product(range(view.batch), range(view.heads), range(view.num_m_blocks)):
        want = touching_kv_tiles(view, m)
        got = orders.get((b, h, m), [])
        assert sorted(got) == want, f"tile {(b, h, m)}: contributors {sorted(got)}, expected {want}"


@pytest.mark.parametrize("view", random_views(60, seed=1), ids=lambda v: f"{v.schedule}-g{v.grid}")
def test_no_deadlock_with_all_ctas_resident(view):
    simulate(view)


def test_every_task_runs_exactly_once():
    for view in random_views(80, seed=2):
        ids = sorted(task.id for program in cta_programs(view) for task in program)
        assert ids == list(range(view.num_tasks()))


def test_shift_groups_touch_distinct_q_tiles():
    for view in random_views(200, seed=3):
        if view.schedule != SHIFT:
            continue
        for round_ in range(view.num_rounds()):
            tasks = [view.task(t) for c in range(view.grid) if (t := view.task_id(c, round_)) >= 0]
            for step in range(view.num_m_blocks):
                seen = set()
                for task in tasks:
                    key = (task.batch, task.head, view.q_tile_at(task, step))
                    assert key not in seen, f"two CTAs of one group on Q tile {key} at step {step}"
                    seen.add(key)


def test_shift_small_case_by_hand():
    """4 KV tiles, 4 Q tiles, one head, 4 CTAs: CTA s starts at Q tile s; Q tile q takes
    its adds from s = q, q-1, ..., 0, 3, ..., q+1."""
    view = BwdScheduleView.for_problem(1, 1, 256, 512, 64, 128, False, SHIFT, 4)
    assert [[view.q_tile_at(view.task(s), t) for t in range(4)] for s in range(4)] == \
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
    lines = [f"case applies={int(shift_applies(view))}"]
    for cta in range(view.grid):
        for round_ in range(view.num_rounds()):
            t = view.task_id(cta, round_)
            if t < 0:
                continue
            task = view.task(t)
            steps = "".join(f" {view.q_tile_at(task, s)}:{view.dq_rank(task, view.q_tile_at(task, s))}"
                            for s in range(view.num_steps(task)))
            lines.append(f"cta {cta} round {round_} task {t} n {task.n_block} h {task.head} b {task.batch} steps{steps}")
    return lines


def test_kernel_schedule_header_matches_python_model(tmp_path):
    exe = _compile_dump(tmp_path)
    views = random_views(120, seed=4) + [
        BwdScheduleView.for_problem(1, 1, 256, 512, 64, 128, False, SHIFT, 4),
        BwdScheduleView.for_problem(2, 3, 4097, 4097, 64, 128, True, ASCENDING, 132),
        BwdScheduleView.for_problem(1, 2, 300, 1000, 128, 128, True, ASCENDING, 5),
    ]
    stdin = "".join(
        f"{v.num_m_blocks} {v.num_n_blocks} {v.heads} {v.batch} {v.seqlen_q} {v.seqlen_k} {v.block_m} "
        f"{v.block_n} {int(v.causal)} {SCHEDULE_IDS[v.schedule]} {v.grid}\n" for v in views)
    out = subprocess.run([str(exe)], input=stdin, capture_output=True, text=True, check=True).stdout.splitlines()
    expected = [line for v in views for line in _python_dump(v)]
    assert len(out) == len(expected)
    for got, want in zip(out, expected):
        assert got == want


SCHEDULE_IDS = {ASCENDING: 0, SHIFT: 1}  # BwdSchedule in csrc/attn_bwd_params.h
