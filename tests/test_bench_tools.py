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
    """Every implementation's column (bench_fwd.py's markdown, bench_bwd.py's plain rows, each under its
    header), averaged over the rounds per side, against the first side."""
    markdown = "| hdim | seqlen | mask | dash | FA3 |\n|---:|---:|---|---:|---:|\n| 128 | 4096 | full | {} | 9.0 |\n"
    plain = "hdim seqlen   mask       dash det   dash non-det\n  64  16384 causal  {}  {}\n"  # bench_bwd.py's rows
    for side, values in {"head": (600.0, 610.0), "change": (630.0, 640.0)}.items():
        for rnd, value in enumerate(values, start=1):
            (tmp_path / f"bench1_{side}_{rnd}.txt").write_text(markdown.format(value))
            (tmp_path / f"bench2_{side}_{rnd}.txt").write_text(plain.format(value / 2, value / 4))
    (tmp_path / "bench1_other_1.txt").write_text(markdown.format(1.0))  # not a named side: ignored
    table = _ab_summary().summarize(tmp_path, ["head", "change"]).splitlines()
    assert table[0] == "| bench | hdim | seqlen | mask | implementation | head | change |"
    assert table[2:] == ["| 1 | 128 | 4096 | full | dash | 605.0 | 635.0 (+5.0%) |",
                         "| 1 | 128 | 4096 | full | FA3 | 9.0 | 9.0 (+0.0%) |",
                         "| 2 | 64 | 16384 | causal | dash det | 302.5 | 317.5 (+5.0%) |",
                         "| 2 | 64 | 16384 | causal | dash non-det | 151.2 | 158.8 (+5.0%) |"]


def test_gpu_test_job_names_existing_gpu_test_files():
    import re
    import subprocess
    script = ROOT / "tools" / "gpu_test_job.sh"
    assert subprocess.run(["bash", "-n", str(script)]).returncode == 0
    files = re.search(r'FILES=\$\{FILES:-"([^"]*)"\}', script.read_text()).group(1).split()
    assert files and all((ROOT / "tests" / f"{name}.py").is_file() for name in files)
    gpu_files = {p.stem for p in (ROOT / "tests").glob("test_*gpu*.py")}
    assert gpu_files <= set(files), "every *_gpu test file runs in the release job"


def _load(name):
    import sys
    sys.path.insert(0, str(ROOT / "bench"))
    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_gpu_clocks_parses_nvidia_smi_samples_and_averages_a_window():
    import datetime
    clocks = _load("gpu_clocks")
    sample = clocks.parse_sample("2026/11/28 05:10:01.250, 1709, 691.37\n")
    assert sample is not None
    stamp = datetime.datetime(2026, 11, 28, 5, 10, 1, 250000).timestamp()
    assert abs(sample[0] - stamp) < 1e-6 and sample[1:] == (1709.0, 691.37)
    for junk in ("timestamp, clocks.current.sm [MHz], power.draw [W]", "2026/11/28 05:10:01.250, [N/A], 600",
                 "2026/11/28 05:10", ""):
        assert clocks.parse_sample(junk) is None
    samples = [(10.0, 1500.0, 600.0), (10.1, 1600.0, 690.0), (10.3, 1700.0, 700.0), (10.5, 1800.0, 680.0),
               (11.0, 1900.0, 650.0)]
    # The first SKIP_S of a window still shows the previous stretch: skipped.
    stats = clocks.window_stats(samples, 10.0, 10.6, skip_s=0.2)
    assert stats.samples == 2 and stats.mhz == 1750.0 and stats.watts == 690.0
    assert clocks.window_stats(samples, 12.0, 13.0) is None


def test_bench_bwd_clock_table_gives_tflops_per_ghz(capsys):
    import pytest
    pytest.importorskip("torch")
    clocks = _load("gpu_clocks")
    bench = _load("bench_bwd")

    class FakeSampler:
        samples = [(100.0 + 0.05 * i, 1600.0 if i < 40 else 1800.0, 690.0) for i in range(80)]

        def window(self, t0, t1):
            return clocks.window_stats(self.samples, t0, t1)

    results = [dict(hdim="64", seqlen=16384, causal=True, tflops={"dash_det": 480.0, "fa3": 520.0, "cudnn": None},
                    windows={"dash_det": [100.01, 101.91], "fa3": [102.01, 103.91], "cudnn": []})]
    bench.print_clocks(results, ["dash_det", "fa3", "cudnn"], FakeSampler(), 4)
    out = capsys.readouterr().out.splitlines()
    assert out[-1].split()[:3] == ["64", "16384", "causal"]
    assert "300.0 @ 1600 / 690" in out[-1] and "288.9 @ 1800 / 690" in out[-1] and out[-1].rstrip().endswith("-")
    assert results[0]["clocks"]["dash_det"] == dict(mhz=1600.0, watts=690.0, samples=34, tflops_per_ghz=300.0)
    assert "cudnn" not in results[0]["clocks"]


def test_bench_fwd_clock_table_gives_tflops_per_ghz():
    import pytest
    pytest.importorskip("torch")
    clocks = _load("gpu_clocks")
    bench = _load("bench_fwd")

    class FakeSampler:
        samples = [(50.0 + 0.05 * i, 1500.0, 700.0) for i in range(60)]

        def window(self, t0, t1):
            return clocks.window_stats(self.samples, t0, t1)

    results = [dict(hdim="128", seqlen=4096, causal=False, tflops={"dash": 600.0, "fa3": None},
                    windows={"dash": [50.01, 52.91], "fa3": []})]
    lines = bench.clock_table(results, ["dash", "fa3"], FakeSampler())
    assert lines[0] == "| hdim | seqlen | mask | dash | FA3 |" and lines[1].startswith("|---:|---:|---|")
    assert lines[2] == "| 128 | 4096 | full | 400.0 @ 1500 / 700 | - |"
    assert results[0]["clocks"] == {"dash": dict(mhz=1500.0, watts=700.0, samples=54, tflops_per_ghz=400.0)}
