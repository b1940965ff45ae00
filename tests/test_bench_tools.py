"""CPU: bench/ab_summary.py, which reads an A/B job's benchmark rows (bench/ab_job.sh)."""
import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _ab_summary():
    spec = importlib.util.spec_from_file_location("ab_summary", ROOT / "bench" / "ab_summary.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_ab_summary_averages_rounds_against_the_first_side(tmp_path):
    markdown = "| hdim | seqlen | mask | dash | FA3 |\n|---:|---:|---|---:|---:|\n| 128 | 4096 | full | {} | 9.0 |\n"
    plain = "  64  16384 causal  {}  1.0\n"  # bench_bwd.py's rows
    for side, values in {"head": (600.0, 610.0), "change": (630.0, 640.0)}.items():
        for rnd, value in enumerate(values, start=1):
            (tmp_path / f"bench1_{side}_{rnd}.txt").write_text(markdown.format(value))
            (tmp_path / f"bench2_{side}_{rnd}.txt").write_text(plain.format(value / 2))
    (tmp_path / "bench1_other_1.txt").write_text(markdown.format(1.0))  # not a named side: ignored
    table = _ab_summary().summarize(tmp_path, ["head", "change"]).splitlines()
    assert table[0] == "| bench | hdim | seqlen | mask | head | change |"
    assert table[2] == "| 1 | 128 | 4096 | full | 605.0 | 635.0 (+5.0%) |"
    assert table[3] == "| 2 | 64 | 16384 | causal | 302.5 | 317.5 (+5.0%) |"
    assert len(table) == 4


def test_gpu_test_job_names_existing_gpu_test_files():
    import re
    import subprocess
    script = ROOT / "tools" / "gpu_test_job.sh"
    assert subprocess.run(["bash", "-n", str(script)]).returncode == 0
    files = re.search(r'FILES=\$\{FILES:-"([^"]*)"\}', script.read_text()).group(1).split()
    assert files and all((ROOT / "tests" / f"{name}.py").is_file() for name in files)
    gpu_files = {p.stem for p in (ROOT / "tests").glob("test_*gpu*.py")}
    assert gpu_files <= set(files), "every *_gpu test file runs in the release job"
