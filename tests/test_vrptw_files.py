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
