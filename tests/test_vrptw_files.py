"""Reading and writing VRPTW files: Solomon text and VRPLIB TYPE: VRPTW (tests/data/vrptw),
DIMACS rounding, .sol round trips and `glns solve FILE`."""

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import glns
from glns.exceptions import InvalidInstanceError

pytest.importorskip("vrplib")
HERE = Path(__file__).parent / "data" / "vrptw"


def test_solomon_and_vrplib_files_give_the_same_instance():
    a, b = glns.read(HERE / "tw12.txt"), glns.read(HERE / "tw12.vrp")
    for p in (a, b):
        assert type(p) is glns.VRPTW and p.n_customers == 12 and p.rounding == "dimacs"
        assert p.vehicles == 6 and p.capacity == 60 and p.service_times[0] == 0
    assert np.array_equal(a.coords, b.coords) and np.array_equal(a.demands, b.demands)
    assert np.array_equal(a.time_windows, b.time_windows)
    assert np.array_equal(a.service_times, b.service_times) and (a.service_times[1:] == 10).all()
    with_section = glns.read(HERE / "tw12s.vrp")
    assert with_section.service_times.tolist() == [0] + [10 + k % 3 for k in range(1, 13)]


def test_dimacs_rounding_truncates_to_one_decimal():
    p = glns.read(HERE / "tw12.txt")
    xy = p.coords
    for a in range(p.n_nodes):
        for b in range(p.n_nodes):
            exact = math.hypot(*(xy[a] - xy[b]))
            assert p.distances[a, b] == math.floor(10 * exact) / 10
    assert glns.read(HERE / "tw12.txt", rounding="exact").distances[1, 2] == pytest.approx(
        math.hypot(*(xy[1] - xy[2])), rel=1e-15)


def test_read_as_cvrp_drops_the_windows():
    p = glns.read(HERE / "tw12.vrp", problem="cvrp")
    assert type(p) is glns.CVRP and p.capacity == 60


def test_solve_write_and_read_back(tmp_path):
    p = glns.read(HERE / "tw12.vrp")
    r = glns.solve(p, iterations=300, seed=3)
    assert p.violation(r.solution) is None and len(r.solution) <= 6
    glns.write_solution(tmp_path / "tw12.sol", r)
    routes, cost = glns.read_solution(tmp_path / "tw12.sol")
    assert routes == r.solution and cost == pytest.approx(r.cost, abs=1e-6)
    # a route with a customer out of its window is named
    tw = p.time_windows
    late, early = max(range(1, 13), key=lambda c: tw[c, 0]), min(range(1, 13), key=lambda c: tw[c, 1])
    assert tw[late, 0] > tw[early, 1]       # serving `late` first makes `early` miss its window
    rest = [[c] for c in range(1, 13) if c not in (late, early)]
    assert f"time window missed at customer {early}" in p.violation([[late, early], *rest])


def test_invalid_window_in_a_file_names_file_and_customer(tmp_path):
    text = (HERE / "tw12.txt").read_text().splitlines()
    row = text[10].split()            # customer 1: ready 224, due 336 -> due 200
    row[5] = "200"
    text[10] = "  ".join(row)
    bad = tmp_path / "bad.txt"
    bad.write_text("\n".join(text) + "\n")
    with pytest.raises(InvalidInstanceError, match="bad.txt: the window of customer 1 closes at 200, before it opens at 224"):
        glns.read(bad)


def test_cli_solves_a_solomon_file(tmp_path):
    out = tmp_path / "tw12.sol"
    run = subprocess.run([sys.executable, "-m", "glns", "solve", str(HERE / "tw12.txt"),
                          "--iterations", "200", "--out", str(out)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "VRPTW" in run.stdout
    routes, cost = glns.read_solution(out)
    p = glns.read(HERE / "tw12.txt")
    assert p.violation(routes) is None and p.cost(routes) == pytest.approx(cost, abs=0.05)


def test_cli_route_cost_adds_a_fixed_cost_per_route():
    def solve(*extra):
        run = subprocess.run([sys.executable, "-m", "glns", "solve", str(HERE / "tw12.txt"),
                              "--iterations", "300", "--json", *extra],
                             capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr
        import json

        return json.loads(run.stdout)

    free, dear = solve(), solve("--route-cost", "100")
    p = glns.read(HERE / "tw12.txt").with_route_cost(100.0)
    assert dear["cost"] == pytest.approx(p.cost(dear["solution"]), rel=1e-12)
    assert dear["cost"] == pytest.approx(glns.read(HERE / "tw12.txt").cost(dear["solution"])
                                         + 100.0 * dear["routes"], rel=1e-12)
    assert dear["routes"] <= free["routes"]

def test_cli_route_cost_refuses_other_problems(capsys):
    from glns.cli import main

    assert main(["solve", "--route-cost", "3"]) == 2        # a CVRP has no route cost
    assert "--route-cost applies to VRPTW instances, not CVRP" in capsys.readouterr().err


def _vrptw_library(tmp_path):
    """A data folder laid out as shared/data/vrptw, with the test files."""
    import shutil

    base = tmp_path / "data"
    for sub, name in (("gh200", "tw12.txt"), ("gh400", "tw12.txt"), ("gh1000", "tw12.vrp")):
        (base / "vrptw" / sub).mkdir(parents=True)
        shutil.copy(HERE / name, base / "vrptw" / sub / name)
    (base / "vrptw" / "gh1000" / "tw12.sol").write_text("Route #1: 1 2\nCost 123.4\n")
    return base


def test_the_vrptw_library_suite_and_its_plain_recheck(tmp_path):
    from glns.benchmark.runner import _checked_cost
    from glns.benchmark.suites import library_groups

    groups = library_groups(["vrptw"], _vrptw_library(tmp_path))
    assert [g.name for g in groups] == ["vrptw-gh200", "vrptw-gh400", "vrptw-gh1000"]
    assert groups[0].references == [None] and groups[2].references == [123.4]
    assert all(g.problem == "vrptw" and g.instances[0].rounding == "dimacs" for g in groups)
    p = groups[2].instances[0]
    good = glns.solve(p, iterations=100, seed=0).solution
    cost, err = _checked_cost(p, good)
    assert err is None and cost == pytest.approx(p.cost(good))
    tw = p.time_windows
    late, early = max(range(1, 13), key=lambda c: tw[c, 0]), min(range(1, 13), key=lambda c: tw[c, 1])
    bad = [[late, early], *[[c] for c in range(1, 13) if c not in (late, early)]]
    assert _checked_cost(p, bad)[1].startswith("infeasible solution")


def test_glns_bench_runs_the_vrptw_library_with_pyvrp(tmp_path):
    pytest.importorskip("pyvrp")
    import json

    from glns.cli import main

    out = tmp_path / "out"
    assert main(["bench", "library", "--libraries", "vrptw", "--data", str(_vrptw_library(tmp_path)),
                 "--solvers", "default", "pyvrp", "--iterations", "100", "--time-limit", "1",
                 "--out", str(out), "--no-progress", "--workers", "1"]) == 0
    runs = json.loads((out / "results.json").read_text())["runs"]
    assert {(r["group"], r["solver"]) for r in runs} == {
        (g, s) for g in ("vrptw-gh200", "vrptw-gh400", "vrptw-gh1000") for s in ("default", "pyvrp")}
    assert all(r["error"] is None and r["cost"] > 0 for r in runs)
    assert all(r["gap"] is not None for r in runs if r["group"] == "vrptw-gh1000")
