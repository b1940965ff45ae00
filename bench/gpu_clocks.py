"""The SM clock and board power during timed windows, sampled by nvidia-smi in the background.

At the H200's 700 W cap every backward kernel runs at the same power, and the power controller
sets the clock each kernel gets: a kernel that does more work a clock can still lose to one
that clocks higher. TFLOPS per GHz (the work a clock) separates the two: RESULTS.md item 159
found dash's hdim 64 causal backward clocking 4.5% above FlashAttention-3's and doing 11-12% less
work a clock. bench_bwd.py --clocks adds these columns.

    sampler = ClockSampler.start()        # None where nvidia-smi is missing (a note says so)
    t0 = time.time(); ...; t1 = time.time()
    sampler.stop()
    sampler.window(t0, t1)                # WindowClocks(mhz, watts, samples) or None

bench_bwd.py and bench_fwd.py take --clocks: time_ms records each implementation's timed window,
and clocks_of turns the windows into clock_records after the grid.
"""
from __future__ import annotations

import dataclasses
import datetime
import shutil
import subprocess
import tempfile

QUERY = "timestamp,clocks.sm,power.draw"
PERIOD_MS = 50
# The first samples of a timed window still show the previous stretch (nvidia-smi averages power
# over its own interval), so a window's statistics start this much after it opens.
SKIP_S = 0.2


@dataclasses.dataclass
class WindowClocks:
    mhz: float     # mean SM clock
    watts: float   # mean board power
    samples: int


def parse_sample(line: str) -> tuple[float, float, float] | None:
    """One line of `nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw --format=csv,noheader,nounits`
    as (unix seconds, MHz, W); None for anything else (a header, a "[N/A]", a partial line)."""
    parts = [p.strip() for p in line.split(",")]
    if len(parts) != 3:
        return None
    try:
        stamp = datetime.datetime.strptime(parts[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
        return stamp, float(parts[1]), float(parts[2])
    except ValueError:
        return None


def window_stats(samples: list[tuple[float, float, float]], t0: float, t1: float,
                 skip_s: float = SKIP_S) -> WindowClocks | None:
    """Mean clock and power of the samples in [t0 + skip_s, t1]; None if there are none (a window
    shorter than the sampling period)."""
    inside = [s for s in samples if t0 + skip_s <= s[0] <= t1]
    if not inside:
        return None
    return WindowClocks(sum(s[1] for s in inside) / len(inside), sum(s[2] for s in inside) / len(inside),
                        len(inside))


def clock_record(tflops: float, stats: WindowClocks) -> dict:
    """One implementation's clocks as the benchmarks store them (JSON), with its work a clock."""
    return dict(mhz=round(stats.mhz, 1), watts=round(stats.watts, 1), samples=stats.samples,
                tflops_per_ghz=round(tflops / (stats.mhz / 1000), 2))


def clock_cell(record: dict) -> str:
    """"TFLOPS per GHz @ MHz / W", as the benchmarks print it."""
    return f"{record['tflops_per_ghz']:.1f} @ {record['mhz']:.0f} / {record['watts']:.0f}"


def clocks_of(sampler, tflops: dict, windows: dict | None) -> dict:
    """impl -> clock_record for every implementation that ran and has samples in its window
    (`windows`: impl -> [start, end] as the benchmarks' time_ms records it)."""
    records = {}
    for impl, window in (windows or {}).items():
        stats = sampler.window(*window) if window and tflops.get(impl) else None
        if stats is not None:
            records[impl] = clock_record(tflops[impl], stats)
    return records


class ClockSampler:
    def __init__(self, process: subprocess.Popen, log):
        self._process = process
        self._log = log
        self.samples: list[tuple[float, float, float]] = []

    @classmethod
    def start(cls, gpu: int | None = None) -> "ClockSampler | None":
        """nvidia-smi sampling every PERIOD_MS ms, or None (with a note) where nvidia-smi is missing."""
        smi = shutil.which("nvidia-smi")
        if smi is None:
            print("note: nvidia-smi not found: no clock / power columns", flush=True)
            return None
        log = tempfile.TemporaryFile(mode="w+")
        command = [smi, f"--query-gpu={QUERY}", "--format=csv,noheader,nounits", "-lms", str(PERIOD_MS)]
        if gpu is not None:
            command += ["-i", str(gpu)]
        return cls(subprocess.Popen(command, stdout=log, stderr=subprocess.DEVNULL), log)

    def stop(self) -> None:
        self._process.terminate()
        self._process.wait()
        self._log.seek(0)
        self.samples = [s for s in map(parse_sample, self._log) if s is not None]
        self._log.close()

    def window(self, t0: float, t1: float) -> WindowClocks | None:
        return window_stats(self.samples, t0, t1)
