"""Regression checks for your own operators and settings, in your CI: record a baseline once,
then fail a build when an objective changed or a run got slower.

A *suite* is a Python file with a dict ``SUITE`` of workloads: name -> a function without
arguments that runs ``glns.solve`` (fixed seed and iteration budget, so that the objective is
deterministic) and returns its :class:`glns.Result` (or a cost). For each workload:

- **objective**: the result's cost must equal the recorded one within ``rtol`` (1e-6: float
  summation differences across platforms move the last digits, a changed search far more);
- **speed**: its CPU time is divided by that of a fixed calibration workload measured in the
  same run, interleaved (c w c w ... c; each workload time against the mean of its two
  neighbours, the median of the ratios counts): compiled code (bz2) for runs with native
  operators only, a pure-Python routine for runs with Python operators. A workload fails when
  its ratio exceeds the recorded one times ``threshold`` in a measurement *and* in a second one
  taken to confirm it, so that a noise spike on a busy CI machine does not fail a build.

``glns regress record SUITE.py BASELINE.json`` and ``glns regress check SUITE.py
BASELINE.json`` are the command line; :func:`check_suite` is the same from a pytest test (see
docs/regression.md).
"""

from __future__ import annotations

import bz2
import importlib.util
import json
import math
import os
import platform
import random
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

__all__ = ["calibrate_c", "calibrate_python", "CALIBRATIONS", "cpu_seconds", "Measurement", "measure",
           "load_suite", "record_suite", "check_suite", "Report", "THRESHOLD", "RTOL", "REPEATS",
           "BASELINE_FORMAT", "record_workload", "check_workload", "new_baseline", "write_baseline",
           "load_baseline", "Row", "interleaved"]

#: a workload fails when its normalised time exceeds the recorded one times this (twice)
THRESHOLD = 1.3
#: relative tolerance of the objectives
RTOL = 1e-6
#: interleaved (calibration, workload) pairs per measurement
REPEATS = 5
#: the "format" entry of a baseline file
BASELINE_FORMAT = ("glns-regression", 1)


# --- calibration workloads ---------------------------------------------------------------

def _payload() -> bytes:
    """About 700 kB of word-like text (compressible, so bz2 does real work on it)."""
    rng = random.Random(20240601)
    words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9)))
             for _ in range(500)]
    return " ".join(rng.choice(words) for _ in range(120_000)).encode()


_PAYLOAD: bytes | None = None


def calibrate_c() -> int:
    """Fixed compiled-code workload: bz2 compression of a fixed payload (about 36 ms): scalar,
    branchy C code of a library unchanged for years, so it tracks a machine's compiled speed."""
    global _PAYLOAD
    if _PAYLOAD is None:
        _PAYLOAD = _payload()
    return len(bz2.compress(_PAYLOAD, 9))


def calibrate_python() -> float:
    """Fixed pure-Python workload shaped like an operator (about 35 ms): cheapest insertion of
    400 points into a tour with a list-of-lists distance matrix, plus dict and set traffic."""
    rng = random.Random(7)
    pts = [(rng.random(), rng.random()) for _ in range(400)]
    d = [[((ax - bx) ** 2 + (ay - by) ** 2) ** 0.5 for bx, by in pts] for ax, ay in pts]
    tour = [0, 1]
    pos: dict[int, int] = {}
    seen = {0, 1}
    for v in range(2, len(pts)):
        best, at = float("inf"), 0
        for i in range(len(tour)):
            a, b = tour[i], tour[(i + 1) % len(tour)]
            delta = d[a][v] + d[v][b] - d[a][b]
            if delta < best:
                best, at = delta, i + 1
        tour.insert(at, v)
        seen.add(v)
        pos = {node: i for i, node in enumerate(tour)}
    return sum(d[tour[i - 1]][tour[i]] for i in range(len(tour))) + len(pos) + len(seen)


CALIBRATIONS: dict[str, Callable[[], object]] = {"c": calibrate_c, "python": calibrate_python}


# --- measuring -----------------------------------------------------------------------------

def _burn(seconds: float) -> None:
    """Spend `seconds` of this process's CPU time (an injected slowdown, for tests)."""
    end = time.process_time() + seconds
    x = 0
    while time.process_time() < end:
        x += 1


def cpu_seconds(func: Callable[[], object], slowdown: float = 1.0) -> float:
    """CPU time of func() in this process (time the process waits for a core does not count);
    slowdown > 1 stretches it, standing for a proportionally slower core (tests)."""
    start = time.process_time()
    func()
    elapsed = time.process_time() - start
    if slowdown > 1:
        _burn((slowdown - 1) * elapsed)
        elapsed = time.process_time() - start
    return elapsed


@dataclass(frozen=True)
class Measurement:
    """Median normalised cost of one workload: workload CPU time / calibration CPU time."""

    name: str
    ratio: float                 # median of the per-pair ratios
    ratios: tuple[float, ...]    # one per interleaved pair
    workload_seconds: float      # median CPU seconds of the workload
    calibration_seconds: float   # median CPU seconds of the calibration

    @property
    def spread(self) -> float:
        """(max - min) / median of the per-pair ratios: the noise within this measurement."""
        return (max(self.ratios) - min(self.ratios)) / self.ratio


#: rounds(timed, setup, n): calls setup() then timed() n times (pytest-benchmark's pedantic can)
Rounds = Callable[[Callable[[], object], Callable[[], object], int], object]


def _plain_rounds(timed: Callable[[], object], setup: Callable[[], object], n: int) -> None:
    for _ in range(n):
        setup()
        timed()


def measure(name: str, work: Callable[[], object], calibration: Callable[[], object],
            repeats: int = REPEATS, slowdown: float = 1.0, warm: bool = False,
            rounds: Rounds = _plain_rounds) -> Measurement:
    """`work` against `calibration`, interleaved (c w c w ... w c), `repeats` pairs, after one
    warm-up call of each (first-call costs such as allocations are not measured); warm: `work`
    ran just now (its warm-up is not repeated). rounds: what runs the (calibration, workload)
    pairs, e.g. pytest-benchmark (the glns pytest plugin)."""
    if not warm:
        work()
    calibration()
    cal: list[float] = []
    wl: list[float] = []
    rounds(lambda: wl.append(cpu_seconds(work, slowdown)),
           lambda: cal.append(cpu_seconds(calibration)), repeats)
    cal.append(cpu_seconds(calibration))
    return interleaved(name, wl, cal)


def interleaved(name: str, workload: list[float], calibration: list[float]) -> Measurement:
    """The measurement of CPU times taken c w c w ... w c: each workload time against the mean
    of the two calibrations around it, the median of those ratios."""
    if len(calibration) != len(workload) + 1 or not workload:
        raise ValueError(f"need n workload times between n + 1 calibration times, got "
                         f"{len(workload)} and {len(calibration)}")
    ratios = tuple(w / ((a + b) / 2) for w, a, b in zip(workload, calibration, calibration[1:]))
    return Measurement(name, statistics.median(ratios), ratios, statistics.median(workload),
                       statistics.median(calibration))


# --- suites --------------------------------------------------------------------------------

def load_suite(path: str | os.PathLike) -> dict[str, Callable[[], Any]]:
    """The ``SUITE`` dict of a suite file; ValueError when it has none or it is malformed."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{path}: no such suite file")
    spec = importlib.util.spec_from_file_location(f"_glns_suite_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.resolve().parent))      # the suite may import its neighbours
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.resolve().parent))
    suite = getattr(module, "SUITE", None)
    if not isinstance(suite, dict) or not suite:
        raise ValueError(f"{path}: a suite file needs a non-empty dict SUITE = {{name: function}}")
    for name, func in suite.items():
        if not isinstance(name, str) or not callable(func):
            raise ValueError(f"{path}: SUITE[{name!r}] must be a function without arguments")
    return suite


def _run(func: Callable[[], Any]) -> tuple[float, str]:
    """(objective, calibration) of one workload call: its cost, and "python" when a Python
    operator ran (its result's operator forms), else "c"."""
    out = func()
    cost = getattr(out, "cost", out)
    try:
        cost = float(cost)
    except (TypeError, ValueError):
        raise ValueError(f"a workload must return a glns.Result or a cost, got {type(out).__name__}") from None
    stats = tuple(getattr(out, "destroy_stats", ())) + tuple(getattr(out, "repair_stats", ()))
    python = any(s.form != "native" for s in stats)
    return cost, "python" if python else "c"


def environment() -> dict[str, str]:
    """Where a baseline was measured (stored beside it, for humans reading a failure)."""
    import numpy as np

    from glns.version import __version__

    return {"python": sys.version.split()[0], "numpy": np.__version__, "glns": __version__,
            "machine": platform.machine(), "platform": platform.platform(),
            "cpus": str(os.cpu_count()), "date": time.strftime("%Y-%m-%d")}


def record_suite(suite: str | os.PathLike, baseline: str | os.PathLike, repeats: int = REPEATS,
                 threshold: float = THRESHOLD, rtol: float = RTOL) -> dict[str, Any]:
    """Run every workload of `suite` and write its objective and normalised speed to
    `baseline` (JSON); returns what was written."""
    workloads = load_suite(suite)
    out = new_baseline(threshold, rtol)
    for name, func in workloads.items():
        out["workloads"][name] = record_workload(name, func, repeats)
    write_baseline(baseline, out)
    return out


#: measure(name, work, calibration, repeats, warm=True): how a workload is timed
Measure = Callable[..., Measurement]


def record_workload(name: str, func: Callable[[], Any], repeats: int = REPEATS,
                    measure_with: Measure | None = None) -> dict[str, Any]:
    """The baseline entry of one workload: its objective, calibration kind and normalised speed.

    measure_with: what takes the measurement (default :func:`measure`; the pytest plugin
    passes one that also reports to pytest-benchmark)."""
    objective, calibration = _run(func)      # also the workload's warm-up
    m = (measure_with or measure)(name, func, CALIBRATIONS[calibration], repeats, warm=True)
    return {"objective": objective, "calibration": calibration, "ratio": m.ratio,
            "cpu_seconds": m.workload_seconds}


def new_baseline(threshold: float = THRESHOLD, rtol: float = RTOL) -> dict[str, Any]:
    """An empty baseline (no workloads yet) recorded here and now."""
    return {"format": list(BASELINE_FORMAT), "threshold": threshold, "rtol": rtol,
            "environment": environment(), "workloads": {}}


def write_baseline(path: str | os.PathLike, baseline: dict[str, Any]) -> None:
    """Write a baseline as JSON."""
    Path(path).write_text(json.dumps(baseline, indent=1) + "\n", encoding="utf-8")


def load_baseline(path: str | os.PathLike) -> dict[str, Any]:
    """A baseline file's contents (ValueError when it is missing or not a baseline)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: cannot read the baseline ({exc}); record it with glns regress record") from None
    if not isinstance(data, dict) or data.get("format", [None])[0] != BASELINE_FORMAT[0]:
        raise ValueError(f"{path}: not a glns regression baseline")
    return data


@dataclass
class Row:
    """One workload's check."""

    name: str
    objective: float
    expected: float | None
    ratio: float | None          # the lower of the measurements
    recorded: float | None
    status: str                  # "ok", "objective changed", "slower", "new" (not in the baseline)

    @property
    def ok(self) -> bool:
        return self.status in ("ok", "new")


@dataclass
class Report:
    """The outcome of :func:`check_suite`: one row per workload; ``ok`` when none failed."""

    threshold: float
    rows: list[Row] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)   # in the baseline, gone from the suite

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.rows)

    def table(self) -> str:
        """A fixed-width table of the workloads, worst first, and a verdict line."""
        head = (f"{'workload':28} {'objective':>16} {'recorded':>16} {'speed':>9} {'recorded':>9} "
                f"{'x':>6}  status")
        lines = [head, "-" * len(head)]
        for r in sorted(self.rows, key=lambda r: (r.ok, r.name)):
            x = r.ratio / r.recorded if r.ratio is not None and r.recorded else math.nan
            lines.append(f"{r.name[:28]:28} {r.objective:16.10g} "
                         f"{(r.expected if r.expected is not None else math.nan):16.10g} "
                         f"{(r.ratio if r.ratio is not None else math.nan):9.4g} "
                         f"{(r.recorded if r.recorded is not None else math.nan):9.4g} {x:6.2f}  {r.status}")
        for name in self.missing:
            lines.append(f"{name[:28]:28} (in the baseline, not in the suite: not checked)")
        failed = [r for r in self.rows if not r.ok]
        lines.append(f"{len(self.rows) - len(failed)} of {len(self.rows)} workloads pass (speed limit: "
                     f"recorded x {self.threshold:g}, confirmed by a second measurement)"
                     + ("" if not failed else f"; FAILED: {', '.join(r.name for r in failed)}"))
        return "\n".join(lines)


def check_suite(suite: str | os.PathLike, baseline: str | os.PathLike, repeats: int = REPEATS,
                threshold: float | None = None, rtol: float | None = None, slowdown: float = 1.0) -> Report:
    """Check every workload of `suite` against `baseline` (threshold and rtol default to the
    ones recorded there). slowdown stretches the measured CPU time (for tests of the check)."""
    workloads = load_suite(suite)
    base = load_baseline(baseline)
    threshold = float(base.get("threshold", THRESHOLD) if threshold is None else threshold)
    rtol = float(base.get("rtol", RTOL) if rtol is None else rtol)
    recorded = base.get("workloads", {})
    report = Report(threshold, missing=sorted(set(recorded) - set(workloads)))
    for name, func in workloads.items():
        report.rows.append(check_workload(name, func, recorded.get(name), threshold, rtol, repeats, slowdown))
    return report


def check_workload(name: str, func: Callable[[], Any], entry: dict[str, Any] | None,
                   threshold: float = THRESHOLD, rtol: float = RTOL, repeats: int = REPEATS,
                   slowdown: float = 1.0, measure_with: Measure | None = None) -> Row:
    """Check one workload against its baseline entry (None: not recorded, status "new").

    The objective first (within `rtol`); then the speed: a first measurement (by
    `measure_with`, default :func:`measure`) over the recorded ratio times `threshold` is
    confirmed by a second one before the workload counts as slower."""
    objective, calibration = _run(func)
    if entry is None:
        return Row(name, objective, None, None, None, "new")
    expected = float(entry["objective"])
    if not math.isclose(objective, expected, rel_tol=rtol, abs_tol=0.0):
        return Row(name, objective, expected, None, float(entry["ratio"]), "objective changed")
    calib = CALIBRATIONS[entry.get("calibration", calibration)]
    limit = float(entry["ratio"]) * threshold
    ratio = (measure_with or measure)(name, func, calib, repeats, slowdown=slowdown, warm=True).ratio
    if ratio > limit:       # confirm: a real slowdown exceeds the limit twice
        ratio = min(ratio, measure(name, func, calib, repeats, slowdown, warm=True).ratio)
    return Row(name, objective, expected, ratio, float(entry["ratio"]), "ok" if ratio <= limit else "slower")
