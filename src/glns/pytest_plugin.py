"""glns's pytest plugin: regression checks of your operators and settings as pytest tests.

Installed with glns (the ``pytest11`` entry point), it adds the fixture ``glns_regression``::

    def test_my_operators(glns_regression):
        glns_regression("my_ops_cvrp100",
                        lambda: glns.solve(CVRP, shaw, regret, iterations=500, seed=1))

Each call checks one workload exactly as ``glns regress check`` does (:mod:`glns.regression`:
the objective within a relative tolerance, the CPU time normalised by a calibration measured
interleaved, a slowdown confirmed by a second measurement) against a baseline file, and fails
the test with the table row when it regressed. ``pytest --glns-record`` records (or refreshes)
the entries of the workloads that ran instead, and writes the file when the session ends.

With pytest-benchmark installed (and not ``--benchmark-disable``), the rounds of the first
measurement in a test are pytest-benchmark's: the workload's wall times appear in its table
and in ``--benchmark-json`` / ``--benchmark-autosave`` files, with the objective, the
normalised speed, the recorded one and the verdict in ``extra_info``. The verdict itself rests
on the calibrated CPU times, not on wall times.

Options: ``--glns-baseline PATH`` (or the ini value ``glns_baseline``; default
``glns-regression.json`` in the root directory), ``--glns-record``, ``--glns-threshold`` and
``--glns-rtol`` (default: those recorded in the baseline).
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any, Callable

import pytest

__all__ = ["glns_regression", "pytest_addoption", "pytest_configure", "pytest_sessionfinish",
           "Baselines"]

DEFAULT_BASELINE = "glns-regression.json"


def pytest_addoption(parser: Any) -> None:
    """The plugin's command-line options and ini value."""
    group = parser.getgroup("glns", "glns regression checks (glns_regression fixture)")
    group.addoption("--glns-record", action="store_true", default=False,
                    help="record the workloads of glns_regression into the baseline instead of checking them")
    group.addoption("--glns-baseline", default=None, metavar="PATH",
                    help=f"the baseline file (default: ini glns_baseline, else {DEFAULT_BASELINE} in the rootdir)")
    group.addoption("--glns-threshold", type=float, default=None,
                    help="speed limit: recorded normalised time x this (default: the baseline's, 1.3)")
    group.addoption("--glns-rtol", type=float, default=None,
                    help="relative tolerance of the objectives (default: the baseline's, 1e-6)")
    parser.addini("glns_baseline", "baseline file of the glns_regression fixture", default=DEFAULT_BASELINE)


class Baselines:
    """The baseline of a session: read on first use, written at the end when recording."""

    def __init__(self, path: Path, recording: bool, threshold: float | None, rtol: float | None) -> None:
        self.path, self.recording = path, recording
        self._threshold, self._rtol = threshold, rtol
        self._data: dict[str, Any] | None = None
        self.changed = False

    @property
    def data(self) -> dict[str, Any]:
        from glns import regression

        if self._data is None:
            if self.path.is_file():
                self._data = regression.load_baseline(self.path)
            else:
                self._data = regression.new_baseline(self._threshold or regression.THRESHOLD,
                                                     regression.RTOL if self._rtol is None else self._rtol)
        return self._data

    @property
    def threshold(self) -> float:
        from glns.regression import THRESHOLD

        return float(self._threshold or self.data.get("threshold", THRESHOLD))

    @property
    def rtol(self) -> float:
        from glns.regression import RTOL

        return float(self.data.get("rtol", RTOL) if self._rtol is None else self._rtol)

    def entry(self, name: str) -> dict[str, Any] | None:
        return self.data.get("workloads", {}).get(name)

    def put(self, name: str, entry: dict[str, Any]) -> None:
        self.data.setdefault("workloads", {})[name] = entry
        self.changed = True

    def save(self) -> None:
        from glns import regression

        if self.recording and self.changed:
            self.data["environment"] = regression.environment()
            regression.write_baseline(self.path, self.data)


_BASELINES = pytest.StashKey[Baselines]()


def pytest_configure(config: Any) -> None:
    """Set up the session's baseline."""
    path = config.getoption("glns_baseline") or config.getini("glns_baseline") or DEFAULT_BASELINE
    path = Path(path)
    if not path.is_absolute():
        path = Path(config.rootpath) / path
    config.stash[_BASELINES] = Baselines(path, bool(config.getoption("glns_record")),
                                         config.getoption("glns_threshold"), config.getoption("glns_rtol"))


def pytest_sessionfinish(session: Any) -> None:
    """Write the baseline when the session recorded workloads."""
    baselines = session.config.stash.get(_BASELINES, None)
    if baselines is not None:
        baselines.save()


def _benchmark(request: Any) -> Any:
    """pytest-benchmark's fixture of this test, or None (not installed, or disabled)."""
    try:
        bench = request.getfixturevalue("benchmark")
    except pytest.FixtureLookupError:
        return None
    return bench if getattr(bench, "enabled", True) else None


class _BenchmarkRounds:
    """A measure() whose c w c w ... c rounds are pytest-benchmark's rounds (the calibration in
    their untimed setup), recording the CPU times glns's verdict rests on. pytest-benchmark
    times one workload per test, and is asked for only when a measurement is due (a workload
    that fails on its objective is not timed); without it (not installed, or disabled) this
    is :func:`glns.regression.measure`."""

    def __init__(self, request: Any) -> None:
        self.request = request
        self.bench: Any = None
        self.used = False

    def __call__(self, name: str, work: Callable[[], Any], calibration: Callable[[], Any],
                 repeats: int = 5, slowdown: float = 1.0, warm: bool = False) -> Any:
        from glns import regression

        bench = None if self.used else _benchmark(self.request)
        self.used = True
        if bench is None:
            return regression.measure(name, work, calibration, repeats, slowdown, warm)
        self.bench = bench
        return regression.measure(
            name, work, calibration, repeats, slowdown, warm,
            rounds=lambda timed, setup, n: bench.pedantic(timed, setup=setup, rounds=n, iterations=1,
                                                          warmup_rounds=0))

    def report(self, **info: Any) -> None:
        """Put glns's figures in pytest-benchmark's extra_info of the timed workload."""
        if self.bench is not None:
            self.bench.extra_info.update(info)
            self.bench = None


@pytest.fixture
def glns_regression(request: Any) -> Callable[..., Any]:
    """``check(name, workload, repeats=5)``: check (or with ``--glns-record``, record) one
    workload -- a function without arguments that runs ``glns.solve`` with a fixed seed and an
    iteration budget and returns the Result -- against the session's baseline.

    Returns the :class:`glns.regression.Row` of the check (the entry written when recording).
    A workload that is not in the baseline passes with a warning.
    """
    from glns import regression

    baselines: Baselines = request.config.stash[_BASELINES]
    rounds = _BenchmarkRounds(request)

    def check(name: str, workload: Callable[[], Any], repeats: int = regression.REPEATS) -> Any:
        if baselines.recording:
            entry = regression.record_workload(name, workload, repeats, rounds)
            baselines.put(name, entry)
            rounds.report(glns_objective=entry["objective"], glns_speed=entry["ratio"], glns_status="recorded")
            return entry
        row = regression.check_workload(name, workload, baselines.entry(name), baselines.threshold,
                                        baselines.rtol, repeats, measure_with=rounds)
        rounds.report(glns_objective=row.objective, glns_speed=row.ratio, glns_recorded_speed=row.recorded,
                      glns_status=row.status)
        if row.status == "new":
            warnings.warn(pytest.PytestWarning(
                f"glns_regression: {name} is not in {os.fspath(baselines.path)}; "
                f"record it with pytest --glns-record"), stacklevel=2)
        if not row.ok:
            pytest.fail(regression.Report(baselines.threshold, [row]).table(), pytrace=False)
        return row

    return check
