"""`glns solve`: --out writes a solution file other tools read; errors for bad instance files,
a wrong --problem and a bad --out are one line and exit 2, not tracebacks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from glns import datasets
from glns.cli import main

HERE = Path(__file__).parent / "data"
A32 = HERE / "cvrplib/A/A-n32-k5.vrp"
P16 = HERE / "cvrplib/P/P-n16-k8.vrp"
EIL51 = HERE / "tsplib/eil51.tsp"


def _solve(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "glns", "solve", *args], capture_output=True,
                          text=True, timeout=300, check=False)


def _printed(stdout: str, key: str) -> str:
    return next(line.split(None, 1)[1] for line in stdout.splitlines() if line.startswith(key + " "))


@pytest.mark.parametrize("instance, extra", [(A32, []), (P16, ["--problem", "ovrp"])], ids=["cvrp", "ovrp"])
def test_out_sol_read_back(tmp_path, instance, extra):
    vrplib = pytest.importorskip("vrplib")
    out = tmp_path / "best.sol"
    run = _solve(str(instance), *extra, "--iterations", "300", "--seed", "2", "--out", str(out))
    assert run.returncode == 0, run.stderr
    # the usual report, plus where the file went
    assert _printed(run.stdout, "solution") == str(out)
    assert [line.split()[0] for line in run.stdout.splitlines()] == [
        "instance", "cost", "routes", "iterations", "time", "stopped", "solution"]
    sol = vrplib.read_solution(out)
    assert sol["cost"] == float(_printed(run.stdout, "cost"))
    assert len(sol["routes"]) == int(_printed(run.stdout, "routes"))
    problem = datasets.read(instance, problem=extra[-1] if extra else None)
    assert problem.cost(sol["routes"]) == sol["cost"]      # a feasible solution of that instance


def test_out_json_and_tour(tmp_path):
    pytest.importorskip("vrplib")
    out = tmp_path / "eil51.tour"
    run = _solve(str(EIL51), "--iterations", "200", "--json", "--out", str(out))
    assert run.returncode == 0, run.stderr
    record = json.loads(run.stdout)
    assert record["out"] == str(out)
    assert datasets.read_solution(out) == (record["solution"], None)


def test_out_of_a_generated_instance(tmp_path, capsys):
    # a TSP in a .sol: one route from city 0, which is not written; the cost in full precision
    assert main(["solve", "--problem", "tsp", "--size", "12", "--iterations", "50", "--json",
                 "--out", str(tmp_path / "t.sol")]) == 0
    record = json.loads(capsys.readouterr().out)
    tour = record["solution"]
    start = tour.index(0)
    assert (tmp_path / "t.sol").read_text().splitlines() == [
        "Route #1: " + " ".join(map(str, tour[start + 1:] + tour[:start])), f"Cost {record['cost']!r}"]


def test_without_out_the_output_is_unchanged(capsys):
    assert main(["solve", "--problem", "cvrp", "--size", "10", "--iterations", "20", "--json"]) == 0
    assert set(json.loads(capsys.readouterr().out)) == {
        "instance", "cost", "routes", "iterations", "runtime", "stop_reason", "solution"}


def _bad_file(tmp_path: Path) -> Path:
    path = tmp_path / "bad.vrp"
    path.write_bytes(b"garbage\x00\xff\xfe\n")
    return path


@pytest.mark.parametrize("argv, message", [
    (lambda d: ["nothere.vrp"], "No such file or directory: 'nothere.vrp'"),
    (lambda d: [str(d)], "Is a directory"),
    (lambda d: [str(_bad_file(d))], "bad.vrp: not a readable TSPLIB/CVRPLIB instance"),
    (lambda d: [str(A32), "--problem", "tsp"], "A-n32-k5.vrp: a VRP file"),
    (lambda d: [str(EIL51), "--problem", "cvrp"], "eil51.tsp: reading it as CVRP needs a DEMAND_SECTION"),
    (lambda d: [str(A32), "--out", str(d / "x.tour")], "write the CVRP solution as a .sol file"),
    (lambda d: [str(A32), "--out", str(d / "no" / "x.sol")], "the folder"),
], ids=["missing", "folder", "unreadable", "vrp-as-tsp", "tsp-as-cvrp", "tour-for-cvrp", "out-folder"])
def test_errors_are_one_line(tmp_path, capsys, argv, message):
    pytest.importorskip("vrplib")
    assert main(["solve", *argv(tmp_path), "--iterations", "5"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("glns: error: ") and captured.err.count("\n") == 1
    assert message in captured.err


def test_error_from_the_command_line_has_no_traceback(tmp_path):
    pytest.importorskip("vrplib")
    run = _solve(str(_bad_file(tmp_path)), "--out", str(tmp_path / "x.sol"))
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.startswith("glns: error: bad.vrp: ") and "Traceback" not in run.stderr
    assert not (tmp_path / "x.sol").exists()


def test_load_penalty_flag_runs_the_penalised_search(capsys):
    argv = ["solve", "--problem", "cvrp", "--size", "40", "--iterations", "200", "--json", "--seed", "3"]
    assert main([*argv, "--load-penalty", "off"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert main([*argv, "--load-penalty", "0.3"]) == 0
    penalised = json.loads(capsys.readouterr().out)
    assert penalised["solution"] != plain["solution"]
    assert main([*argv, "--load-penalty", "1.5"]) == 2
    assert "load_penalty must be in (0, 1)" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([*argv, "--load-penalty", "much"])
    assert "expected a share in (0, 1), 'auto' or 'off'" in capsys.readouterr().err


def test_load_penalty_auto_and_off(capsys, tmp_path):
    """40 customers in routes of about 5: the default (auto) penalises loads, 'off' does not."""
    rs = np.random.default_rng(7)
    xy, q = rs.integers(0, 100, (41, 2)), rs.integers(1, 10, 41)
    lines = ["NAME : short", "TYPE : CVRP", "DIMENSION : 41", "EDGE_WEIGHT_TYPE : EUC_2D",
             "CAPACITY : 25", "NODE_COORD_SECTION",
             *(f"{i + 1} {x} {y}" for i, (x, y) in enumerate(xy)), "DEMAND_SECTION",
             *(f"{i + 1} {0 if i == 0 else q[i]}" for i in range(41)), "DEPOT_SECTION", "1", "-1", "EOF"]
    path = tmp_path / "short.vrp"
    path.write_text("\n".join(lines) + "\n")
    argv = ["solve", str(path), "--iterations", "200", "--json", "--seed", "3"]
    runs = {}
    for flag in ([], ["--load-penalty", "auto"], ["--load-penalty", "off"], ["--load-penalty", "0.3"]):
        assert main([*argv, *flag]) == 0
        runs[" ".join(flag)] = json.loads(capsys.readouterr().out)["solution"]
    assert runs[""] == runs["--load-penalty auto"] == runs["--load-penalty 0.3"]
    assert runs["--load-penalty off"] != runs[""]
