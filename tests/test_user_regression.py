"""Regression checks for users' CI (glns.regression, `glns regress record|check`): two
unchanged runs pass, an operator whose own work is made 3x slower fails, a changed objective fails."""

import json
import subprocess
import sys
import textwrap

import pytest

from glns import regression

#: the workloads' set-up, shared with the pytest plugin's tests (tests/test_pytest_plugin.py)
OPERATORS = textwrap.dedent("""
    import os
    import glns
    from glns import datasets
    from glns.operators.seeds import BY_PROBLEM

    SLOW = float(os.environ.get("SUITE_SLOW", "1"))
    ITERATIONS = int(os.environ.get("SUITE_ITERATIONS", "2000"))
    CVRP = datasets.generate_cvrp(30, 1)
    PLAIN = glns.SolveParams.paper(compile="off")
    # SUITE_ITERATIONS=3 with SUITE_PLAIN (no penalised loads: routes here are short, and with
    # them one iteration already finds the 2,000 iterations' result) is a changed search
    NATIVE = glns.SolveParams(load_penalty=None) if os.environ.get("SUITE_PLAIN") else glns.SolveParams()

    def slow_removal(x, k, problem_data):
        s = 0
        for i in range(int(60000 * SLOW)):    # the operator's own work
            s += i
        return BY_PROBLEM["cvrp"].random_removal(x, k, problem_data)
""")

SUITE = OPERATORS + textwrap.dedent("""
    SUITE = {
        "native_cvrp30": lambda: glns.solve(CVRP, iterations=ITERATIONS, seed=1, params=NATIVE),
        "python_operator_cvrp30": lambda: glns.solve(CVRP, slow_removal, "greedy_insertion",
                                                     iterations=40, seed=1, params=PLAIN),
    }
""")


@pytest.fixture
def suite(tmp_path):
    path = tmp_path / "suite.py"
    path.write_text(SUITE)
    baseline = tmp_path / "baseline.json"
    regression.record_suite(path, baseline)
    return path, baseline


def test_a_recorded_baseline_has_objectives_and_speeds(suite):
    _, baseline = suite
    data = json.loads(baseline.read_text())
    assert data["format"] == list(regression.BASELINE_FORMAT) and data["threshold"] == regression.THRESHOLD
    w = data["workloads"]
    assert w["native_cvrp30"]["calibration"] == "c" and w["python_operator_cvrp30"]["calibration"] == "python"
    assert all(e["ratio"] > 0 and e["objective"] > 0 for e in w.values())


def test_two_unchanged_runs_pass(suite):
    path, baseline = suite
    for _ in range(2):
        report = regression.check_suite(path, baseline)
        assert report.ok, report.table()
        assert [r.status for r in report.rows] == ["ok", "ok"]


def test_an_operator_made_slower_fails(suite, monkeypatch):
    path, baseline = suite
    monkeypatch.setenv("SUITE_SLOW", "3")     # read when the suite file is loaded again; 3x the operator's work clears the 1.3 limit with a margin for the solve around it and for noise
    report = regression.check_suite(path, baseline)
    rows = {r.name: r for r in report.rows}
    assert not report.ok and rows["python_operator_cvrp30"].status == "slower", report.table()
    assert rows["native_cvrp30"].ok
    assert "FAILED: python_operator_cvrp30" in report.table()


def test_a_changed_objective_fails(suite, monkeypatch):
    path, baseline = suite
    monkeypatch.setenv("SUITE_ITERATIONS", "3")     # a changed search
    monkeypatch.setenv("SUITE_PLAIN", "1")
    report = regression.check_suite(path, baseline)
    rows = {r.name: r for r in report.rows}
    assert rows["native_cvrp30"].status == "objective changed" and rows["python_operator_cvrp30"].ok


def test_the_command_line_records_checks_and_fails_with_a_table(tmp_path):
    path = tmp_path / "suite.py"
    path.write_text(SUITE)
    baseline = tmp_path / "b.json"
    run = lambda *a, **env: subprocess.run([sys.executable, "-m", "glns", "regress", *a], capture_output=True,
                                           text=True, timeout=300, env={**__import__("os").environ, **env})
    rec = run("record", str(path), str(baseline))
    assert rec.returncode == 0 and "baseline written" in rec.stdout, rec.stderr
    ok = run("check", str(path), str(baseline))
    assert ok.returncode == 0 and "2 of 2 workloads pass" in ok.stdout, ok.stdout + ok.stderr
    bad = run("check", str(path), str(baseline), SUITE_ITERATIONS="3", SUITE_PLAIN="1")
    assert bad.returncode == 1 and "objective changed" in bad.stdout and "FAILED: native_cvrp30" in bad.stdout


def test_bad_suites_and_baselines_are_clear_errors(tmp_path):
    empty = tmp_path / "empty.py"
    empty.write_text("X = 1\n")
    with pytest.raises(ValueError, match="needs a non-empty dict SUITE"):
        regression.load_suite(empty)
    with pytest.raises(ValueError, match="no such suite file"):
        regression.load_suite(tmp_path / "missing.py")
    good = tmp_path / "s.py"
    good.write_text(SUITE)
    with pytest.raises(ValueError, match="cannot read the baseline"):
        regression.check_suite(good, tmp_path / "none.json")
