"""CPU: tools/check_sass.py's loop finder and its report on small hand-written SASS listings
(the library's own SASS needs a build; `make sass` checks that)."""
import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _check_sass():
    spec = importlib.util.spec_from_file_location("check_sass", ROOT / "tools" / "check_sass.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _code(lines):
    """(address, instruction) pairs, 16 bytes apart, as split_functions gives them; a line may
    start with "name:" (a label) and name labels in braces as branch targets."""
    labels, texts = {}, []
    for i, line in enumerate(lines):
        if ":" in line.split()[0]:
            labels[line.split(":")[0]] = f"0x{16 * i:x}"
            line = line.split(":", 1)[1].strip()
        texts.append(line)
    return [(16 * i, text.format(**labels)) for i, text in enumerate(texts)]


# A producer's layout as ptxas emits it: a task loop around a step loop whose wait's retry path
# sits after the function's end (out of line) and jumps back into the middle of the step loop,
# and a spill in the step loop's body. A search by address spans took the retry path's jump for
# a loop of its own, from there to the function's end, holding the rest of the function.
def producer(spill=True):
    return [
        "USETMAXREG.DEALLOC.CTAPOOL 0x28",
        "task: MOV R2, RZ",
        "step: SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [R3], R4",
        "@!P0 BRA {retry}",
        "resume: " + ("STL [R1], R5" if spill else "MOV R6, R5"),
        "UTMALDG.4D [UR8], [UR34], desc[UR32]",
        "LDL R5, [R1]" if spill else "MOV R5, R6",
        "@P1 BRA {step}",
        "@P2 BRA {task}",
        "@P3 BRA {done}",
        "done: EXIT",
        "BRA {done}",
        "retry: SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [R3], R4",
        "@!P0 BRA {retry}",
        "BRA {resume}",
    ]


MMA = ["mma: HGMMA.64x128x16.F32.BF16 R24, gdesc[UR4], R24", "@P0 BRA {mma}"]


def test_natural_loops_follow_the_branches_not_the_addresses():
    cs = _check_sass()
    code = _code(producer())
    loops = cs.FunctionLoops(code)
    steps = loops.innermost_issuing("UTMALDG")
    assert len(steps) == 1
    body = {a // 16 for a, _ in loops.body(steps[0])}
    assert body == {2, 3, 4, 5, 6, 7, 12, 13, 14}  # the out-of-line retry path included
    assert sum(cs.is_spill(i) for _, i in loops.body(steps[0])) == 2
    # the task loop issues a load too, but holds the step loop: not innermost
    assert len(loops.issuing("UTMALDG")) == 2


def test_analyse_reports_producer_step_spills():
    cs = _check_sass()
    r = cs.analyse(_code(MMA + producer()))
    assert r["main_loop_len"] == 2 and r["main_spills"] == 0
    assert r["producer_step_spills"] == 2 and r["producer_spills"] == 2
    assert cs.analyse(_code(MMA + producer(spill=False)))["producer_step_spills"] == 0


def test_jump_table_targets_count_as_entries():
    """A BRX's targets are unknown: blocks with no predecessor are entries, so a loop reached
    only through a jump table is still found."""
    cs = _check_sass()
    code = _code([
        "BRX R2 -0x10",                      # 0
        "EXIT",                              # 1
        "UTMALDG.4D [UR8], [UR34], desc[UR32]",  # 2  loop reached by the jump table only
        "@P0 BRA 0x20",                      # 3
        "EXIT",                              # 4
    ])
    loops = cs.FunctionLoops(code)
    assert [{a // 16 for a, _ in loops.body(h)} for h in loops.innermost_issuing("UTMALDG")] == [{2, 3}]


def test_serialized_wgmmas_fail():
    """ptxas serializes a kernel's WGMMAs (its C7515 note, which fails no build) by making every
    HGMMA wait on its own group: each carries gsb0. Batched, only a GEMM's last one does."""
    cs = _check_sass()
    gemm = lambda serialized: [  # noqa: E731
        "WARPGROUP.ARRIVE",
        "HGMMA.64x128x16.F32.BF16 R24, gdesc[UR4], R24" + (", gsb0" if serialized else ""),
        "HGMMA.64x128x16.F32.BF16 R24, gdesc[UR8], R24, gsb0",
        "WARPGROUP.DEPBAR.LE gsb0, 0x0",
    ]
    loop = lambda serialized: _code(["mma: " + gemm(serialized)[0]] + gemm(serialized)[1:] + ["@P0 BRA {mma}"])  # noqa: E731
    assert not cs.analyse(loop(False))["serialized"]
    assert cs.analyse(loop(True))["serialized"]
