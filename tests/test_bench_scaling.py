"""bench/scaling.py (issue 13): time per iteration and peak memory against n, one child process
per size; a child that fails is a row with its status."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
from pathlib import Path

import pytest

_SCRIPT = Path(__file__).resolve().parents[1] / "bench" / "scaling.py"
_spec = importlib.util.spec_from_file_location("bench_scaling", _SCRIPT)
scaling = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(scaling)


def test_scaling_rows_for_each_problem_and_size(tmp_path, capsys):
    out = tmp_path / "out"
    assert scaling.main(["--problems", "tsp", "cvrp", "--sizes", "50", "--seconds", "0.2", "--out", str(out)]) == 0
    doc = json.loads((out / "scaling.json").read_text())
    assert doc["settings"]["seconds"] == 0.2 and doc["environment"]["cores"] >= 1
    rows = doc["rows"]
    assert [(r["problem"], r["n"], r["status"]) for r in rows] == [("tsp", 50, "ok"), ("cvrp", 50, "ok")]
    for r in rows:
        assert r["iterations"] > 0 and 0 < r["median_iteration_ms"] and 0 < r["mean_iteration_ms"]
        assert 0 < r["first_iteration_s"] <= r["loop_s"]
        assert r["solve_s"] >= 0.2 and r["loop_s"] <= r["solve_s"] and r["generate_s"] >= 0 and r["core_s"] >= 0
        assert r["peak_rss_mb"] >= r["rss_after_core_mb"] >= r["rss_after_generate_mb"] > 10
    table = (out / "scaling.md").read_text()
    assert table.startswith("| problem | n | status | iterations | median it. ms | median / smallest n |")
    assert "| cvrp | 50 | ok |" in table and table.count(" | 1.00x | ") == 2     # each is its own smallest
    assert table in capsys.readouterr().out


def test_fixed_removals_remove_that_many_at_every_size(tmp_path):
    import glns
    for n, tour in ((100, True), (500, True), (500, False), (20000, True)):
        assert scaling.fixed_removals(30).destroy_range(n, tour) == (30, 30)
    assert glns.SolveParams().destroy_range(100) != (30, 30)      # the default draws k
    assert scaling.main(["--problems", "tsp", "--sizes", "40", "--seconds", "0.1", "--removals", "5",
                         "--out", str(tmp_path)]) == 0
    doc = json.loads((tmp_path / "scaling.json").read_text())
    assert doc["settings"]["removals"] == 5 and doc["rows"][0]["status"] == "ok"
    with pytest.raises(SystemExit):
        scaling.main(["--sizes", "40", "--removals", "41", "--out", str(tmp_path)])


def test_a_size_that_does_not_fit_is_a_row_not_a_crash(tmp_path):
    # five million cities: their neighbour table alone (2 GB) does not fit under 1 GB
    (row,) = scaling.run(["tsp"], [5 * 10**6], 0.2, tmp_path, memory_gb=1.0)
    assert row["status"] == "memory" and "MemoryError in core" in row["error"] and row["peak_rss_mb"] > 0
    assert "| tsp | 5000000 | memory | – |" in scaling.markdown([row])


def test_exit_status_of_a_child_without_a_row():
    assert scaling.exit_status(signal.SIGKILL) == ("killed", "killed by SIGKILL (possibly the system's out-of-memory killer)")
    assert scaling.exit_status(signal.SIGSEGV)[1] == "killed by SIGSEGV"
    assert scaling.exit_status(3 << 8) == ("error", "the child exited with code 3 and no result")


@pytest.mark.skipif(not hasattr(os, "wait4"), reason="POSIX only")
def test_a_child_past_its_timeout_is_killed(tmp_path):
    row = scaling.run_child("cvrp", 50, 30.0, 0, None, timeout=1.0)
    assert row["status"] == "timeout" and row["peak_rss_mb"] > 0


def test_each_median_is_compared_with_its_problems_smallest_n():
    rows = [{"problem": "tsp", "n": 10000, "status": "ok", "median_iteration_ms": 0.3},
            {"problem": "tsp", "n": 100, "status": "ok", "median_iteration_ms": 0.12},
            {"problem": "cvrp", "n": 100, "status": "ok", "median_iteration_ms": 0.08},
            {"problem": "cvrp", "n": 30000, "status": "memory", "median_iteration_ms": None},
            {"problem": "cvrp", "n": 10000, "status": "ok", "median_iteration_ms": 0.2}]
    assert scaling.per_smallest(rows) == pytest.approx([2.5, 1.0, 1.0, None, 2.5])
    table = scaling.markdown(rows)
    assert "| tsp | 10000 | ok | – | 0.300 | 2.50x |" in table and "| cvrp | 30000 | memory | – | – | – |" in table
