"""Tests of glns.datasets: generators, the paper's sets, reference tables and file readers.

Comparisons with the shared benchmark data (``shared/data`` next to the repository, or
``$GLNS_DATA``) skip when it is absent; everything else runs from a plain clone.
"""

from __future__ import annotations

import csv
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from glns import datasets
from glns.exceptions import InvalidInstanceError
from glns.problems import CVRP, OVRP, TSP

HERE = Path(__file__).parent / "data"
NO_SHARED = "shared benchmark data not found (set GLNS_DATA or put shared/data next to the repository)"

# (instance file, solution file, problem kind, DIMENSION)
FILES = [
    ("tsplib/eil51.tsp", "tsplib/eil51.opt.tour", "tsp", 51),
    ("tsplib/berlin52.tsp", "tsplib/berlin52.opt.tour", "tsp", 52),
    ("cvrplib/A/A-n32-k5.vrp", "cvrplib/A/A-n32-k5.sol", "cvrp", 32),
    ("cvrplib/E/E-n13-k4.vrp", "cvrplib/E/E-n13-k4.sol", "cvrp", 13),
    ("cvrplib/P/P-n16-k8.vrp", "cvrplib/P/P-n16-k8.sol", "cvrp", 16),
]
EUC_2D = [f for f in FILES if "E-n13" not in f[0]]

# the sets stored in shared/data/synthetic
STORED = [(p, s, n) for p, plan in datasets.PAPER_PLAN.items() for s, sizes in plan for n, _ in sizes
          if s != "validation" and n <= 200]
TEST_SIZES = (10, 20, 50, 100, 200)


def shared_dir() -> Path:
    d = datasets.shared_data_dir()
    if d is None:
        pytest.skip(NO_SHARED)
    return d


def shared_file(name: str) -> Path:
    path = shared_dir() / "synthetic" / name
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    return path


def tour_length(d: np.ndarray, tour: list[int]) -> float:
    return sum(float(d[tour[i - 1], tour[i]]) for i in range(len(tour)))


def routes_length(d: np.ndarray, routes: list[list[int]]) -> float:
    # closed routes: depot -> customers -> depot
    return sum(tour_length(d, [0, *route]) for route in routes)


# --- generators -------------------------------------------------------------------------------


def test_generate_tsp():
    p = datasets.generate_tsp(30, seed=7)
    assert isinstance(p, TSP) and p.coords.shape == (30, 2) and p.n_customers == 30
    assert (p.coords >= 0).all() and (p.coords < 1).all()
    assert np.array_equal(p.coords, np.random.RandomState(7).rand(30, 2))
    assert np.array_equal(datasets.generate_tsp(30, seed=7).coords, p.coords)
    assert not np.array_equal(datasets.generate_tsp(30, seed=8).coords, p.coords)


@pytest.mark.parametrize("gen, cls", [(datasets.generate_cvrp, CVRP), (datasets.generate_ovrp, OVRP)])
def test_generate_vrp(gen, cls):
    p = gen(40, seed=3)
    assert type(p) is cls and p.n_nodes == 41 and p.capacity == 50
    assert p.coords[0].tolist() == [0.5, 0.5] and p.demands[0] == 0
    assert p.demands.dtype == np.int64 and set(p.demands[1:].tolist()) <= set(range(1, 10))
    rs = np.random.RandomState(3)  # customers first, then demands
    assert np.array_equal(p.coords[1:], rs.rand(40, 2))
    assert np.array_equal(p.demands[1:], rs.randint(1, 10, size=40))
    again = gen(40, seed=3)
    assert np.array_equal(again.coords, p.coords) and np.array_equal(again.demands, p.demands)
    assert not np.array_equal(gen(40, seed=4).demands, p.demands)
    assert gen(5, seed=0, capacity=12).capacity == 12


def test_cvrp_and_ovrp_generators_draw_the_same_data():
    c, o = datasets.generate_cvrp(20, 11), datasets.generate_ovrp(20, 11)
    assert np.array_equal(c.coords, o.coords) and np.array_equal(c.demands, o.demands)


def test_generate_invalid_size():
    with pytest.raises(ValueError, match="positive"):
        datasets.generate_cvrp(0, seed=1)
    with pytest.raises(InvalidInstanceError):
        datasets.generate_tsp(1, seed=1)  # one city is not an instance


# --- the paper's sets -------------------------------------------------------------------------


@pytest.mark.parametrize("problem", datasets.PROBLEMS)
def test_paper_instances_structure(problem):
    plan = dict(datasets.PAPER_PLAN[problem])
    for split in datasets.SPLITS:
        for n, count in plan[split]:
            if n > 200:
                continue
            sets = datasets.paper_instances(problem, n, split)
            assert len(sets) == count
            assert sets[0].n_customers == n and sets[0].kind == problem
            assert sets[3].name == f"{problem}_{split}{n}_3"
            if problem != "tsp":
                assert all(p.capacity == 50 and p.coords[0].tolist() == [0.5, 0.5] for p in sets)


def test_paper_instances_fresh_and_cached():
    a = datasets.paper_instances("cvrp", 20)
    b = datasets.paper_instances("cvrp", 20)
    assert a is not b and a[0] is not b[0]
    assert np.array_equal(a[5].coords, b[5].coords)
    a.clear()
    assert len(datasets.paper_instances("cvrp", 20)) == 64


def test_paper_instances_draw_one_instance_at_a_time():
    # np.random.seed(1234), then per instance rand(N, 2) and randint(1, 10, N)
    rs = np.random.RandomState(1234)
    train = datasets.paper_instances("cvrp", 50, "train")
    for p in train[:3]:
        assert np.array_equal(p.coords[1:], rs.rand(50, 2))
        assert np.array_equal(p.demands[1:], rs.randint(1, 10, size=50))
    tsp = datasets.paper_instances("tsp", 50, "train")
    assert np.array_equal(np.stack([p.coords for p in tsp]), np.random.RandomState(1234).rand(10, 50, 2))


def test_paper_instances_leave_global_rng_alone():
    datasets._paper_arrays.cache_clear()
    np.random.seed(99)
    before = np.random.get_state()[1].copy()
    datasets.paper_instances("ovrp", 10)
    assert np.array_equal(np.random.get_state()[1], before)


def test_paper_instances_validation_alias_and_large_tsp():
    val = datasets.paper_instances("ovrp", 100, "val")
    assert len(val) == 16 and val[0].name == "ovrp_validation100_0"
    assert datasets.paper_instances("tsp", 500)[0].n_nodes == 500


@pytest.mark.parametrize("args, match", [
    (("vrp", 10), "unknown problem"),
    (("tsp", 10, "dev"), "unknown split"),
    (("cvrp", 30), "no size 30"),
    (("cvrp", 500), "no size 500"),
    (("ovrp", 10, "train"), "no size 10"),
])
def test_paper_instances_errors(args, match):
    with pytest.raises(ValueError, match=match):
        datasets.paper_instances(*args)


@pytest.mark.parametrize("problem, split, n", STORED, ids=[f"{p}_{s}{n}" for p, s, n in STORED])
def test_paper_instances_bit_identical_to_shared_npz(problem, split, n):
    path = shared_file(f"{problem}_{split}{n}.npz")
    sets = datasets.paper_instances(problem, n, split)
    with np.load(path, allow_pickle=False) as data:
        assert np.array_equal(np.stack([p.coords for p in sets]), data["coords"])
        if problem != "tsp":
            assert np.array_equal(np.stack([p.demands for p in sets]), data["demands"])
            assert data["demands"].dtype == np.int64
            assert all(p.capacity == int(data["capacity"]) for p in sets)


def test_every_shared_npz_is_covered():
    files = {p.name for p in (shared_dir() / "synthetic").glob("*.npz")}
    assert files == {f"{p}_{s}{n}.npz" for p, s, n in STORED}


# --- reference objectives ---------------------------------------------------------------------


@pytest.mark.parametrize("problem", datasets.PROBLEMS)
@pytest.mark.parametrize("n", TEST_SIZES)
def test_reference_table_matches_shared_npz(problem, n):
    with np.load(shared_file(f"{problem}_test{n}.npz"), allow_pickle=False) as data:
        ref = datasets.reference_objectives(problem, n)
        assert ref.dtype == np.float64 and np.array_equal(ref, data["ref_obj"])  # exact, not approx
        entry = datasets._table("reference_objectives.json")[problem][str(n)]
        assert entry["ref_solver"] == data["ref_solver"].tolist()
        assert entry["ref_note"] == str(data["ref_note"])


def test_reference_objectives_shipped():
    for problem in datasets.PROBLEMS:
        for n in TEST_SIZES:
            ref = datasets.reference_objectives(problem, n)
            assert ref.shape == (64,) and np.isfinite(ref).all() and (ref > 0).all()
    assert datasets.reference_objectives("tsp", 500) is None
    # the means of SPEC §5 (LKH-3 row; VRP: best of two solvers, never above PyVRP's mean)
    tsp = [round(float(datasets.reference_objectives("tsp", n).mean()), 4) for n in TEST_SIZES]
    assert tsp == [2.8332, 3.8251, 5.7168, 7.8131, 10.6649]
    pyvrp = {"cvrp": [3.0964, 4.5544, 7.8436, 12.8963, 22.5804],
             "ovrp": [2.2890, 3.4278, 5.6472, 8.5369, 13.9599]}
    for problem, means in pyvrp.items():
        for n, m in zip(TEST_SIZES, means):
            assert datasets.reference_objectives(problem, n).mean() < m + 5e-5


def test_reference_objectives_fit_the_instances():
    # an objective is at least the sum of the depot's two nearest legs (TSP: a tour ≥ 2 * max edge)
    for p, ref in zip(datasets.paper_instances("tsp", 10), datasets.reference_objectives("tsp", 10)):
        assert ref >= 2 * p.distances.max() - 1e-12
    with pytest.raises(ValueError, match="unknown problem"):
        datasets.reference_objectives("pdptw", 10)
    with pytest.raises(ValueError, match="the paper's sets have no VRPTW instances"):
        datasets.reference_objectives("vrptw", 10)


# --- .npz files ---------------------------------------------------------------------------------


def test_load_npz_roundtrip(tmp_path):
    sets = datasets.paper_instances("ovrp", 20, "train")
    path = tmp_path / "ovrp_train20.npz"
    np.savez(path, coords=np.stack([p.coords for p in sets]), demands=np.stack([p.demands for p in sets]),
             capacity=np.array(50))
    loaded, ref = datasets.load_npz(path)
    assert ref is None and len(loaded) == 16 and all(type(p) is OVRP for p in loaded)
    assert loaded[2].name == "ovrp_train20_2"
    assert all(np.array_equal(a.coords, b.coords) and np.array_equal(a.demands, b.demands)
               for a, b in zip(sets, loaded))
    other = tmp_path / "mine.npz"
    other.write_bytes(path.read_bytes())
    assert type(datasets.load_npz(other, problem="cvrp")[0][0]) is CVRP
    with pytest.raises(ValueError, match="problem="):
        datasets.load_npz(other)


def test_load_npz_tsp_with_reference(tmp_path):
    path = tmp_path / "tsp_x.npz"
    np.savez(path, coords=np.random.RandomState(0).rand(3, 6, 2), ref_obj=np.array([1.0, 2.0, 3.0]))
    loaded, ref = datasets.load_npz(path)
    assert [type(p) for p in loaded] == [TSP] * 3 and ref.tolist() == [1.0, 2.0, 3.0]


def test_load_shared_npz():
    loaded, ref = datasets.load_npz(shared_file("cvrp_test10.npz"))
    assert len(loaded) == 64 and np.array_equal(ref, datasets.reference_objectives("cvrp", 10))


def test_shared_data_dir_env(tmp_path, monkeypatch):
    monkeypatch.setenv("GLNS_DATA", str(tmp_path))
    assert datasets.shared_data_dir() == tmp_path
    monkeypatch.setenv("GLNS_DATA", str(tmp_path / "absent"))
    assert datasets.shared_data_dir() is None


# --- TSPLIB / CVRPLIB files ---------------------------------------------------------------------


@pytest.mark.parametrize("inst, sol, kind, dim", FILES, ids=[Path(f[0]).stem for f in FILES])
def test_read_and_solution_cost(inst, sol, kind, dim):
    pytest.importorskip("vrplib")
    p = datasets.read(HERE / inst)
    name = Path(inst).stem
    assert p.kind == kind and p.n_nodes == dim and p.name == name
    assert np.array_equal(p.distances, np.round(p.distances))  # nint: integral distances
    solution, stated = datasets.read_solution(HERE / sol)
    if kind == "tsp":
        assert stated is None and sorted(solution) == list(range(dim))
        assert tour_length(p.distances, solution) == datasets.best_known(name)
    else:
        # customer c of the .sol is node c of the instance (depot 0): a feasible partition
        assert sorted(c for r in solution for c in r) == list(range(1, dim))
        assert all(sum(int(p.demands[c]) for c in r) <= p.capacity for r in solution)
        assert routes_length(p.distances, solution) == stated == datasets.best_known(name)


@pytest.mark.parametrize("inst, sol, kind, dim", EUC_2D, ids=[Path(f[0]).stem for f in EUC_2D])
def test_read_exact_rounding(inst, sol, kind, dim):
    pytest.importorskip("vrplib")
    nint, exact = datasets.read(HERE / inst), datasets.read(HERE / inst, rounding="exact")
    assert not np.array_equal(exact.distances, np.round(exact.distances))
    assert not np.array_equal(exact.distances, nint.distances)
    assert np.abs(exact.distances - nint.distances).max() <= 0.5
    assert np.array_equal(nint.distances, np.floor(exact.distances + 0.5))
    assert np.array_equal(exact.coords, nint.coords)


def test_read_explicit_matrix_as_given():
    pytest.importorskip("vrplib")
    path = HERE / "cvrplib/E/E-n13-k4.vrp"
    p, exact = datasets.read(path), datasets.read(path, rounding="exact")
    assert p.coords is None and np.array_equal(p.distances, exact.distances)
    assert p.distances[1, 0] == 9 and p.distances[12, 11] == 10  # first and last LOWER_ROW entries
    assert np.array_equal(p.distances, p.distances.T) and p.capacity == 6000


def test_read_as_ovrp():
    pytest.importorskip("vrplib")
    p = datasets.read(HERE / "cvrplib/P/P-n16-k8.vrp", problem="ovrp")
    assert type(p) is OVRP and p.capacity == 35 and p.demands[0] == 0


@pytest.mark.parametrize("rounding", ["round", "NINT", "ceil", ""])
def test_read_invalid_rounding(rounding):
    with pytest.raises(ValueError, match=r"rounding must be one of \('nint', 'exact', 'dimacs'\)"):
        datasets.read(HERE / "tsplib/eil51.tsp", rounding=rounding)


def test_read_unsupported_edge_weight_type(tmp_path):
    pytest.importorskip("vrplib")
    text = (HERE / "tsplib/eil51.tsp").read_text().replace("EUC_2D", "GEO")
    (tmp_path / "geo51.tsp").write_text(text)
    with pytest.raises(ValueError, match="unsupported EDGE_WEIGHT_TYPE 'GEO'"):
        datasets.read(tmp_path / "geo51.tsp")


def test_read_ceil_2d_rounds_every_edge_up(tmp_path):
    pytest.importorskip("vrplib")
    text = (HERE / "tsplib/eil51.tsp").read_text().replace("EUC_2D", "CEIL_2D")
    (tmp_path / "ceil51.tsp").write_text(text)
    p = datasets.read(tmp_path / "ceil51.tsp")
    raw = datasets.read(tmp_path / "ceil51.tsp", rounding="exact")
    nint = datasets.read(HERE / "tsplib/eil51.tsp")
    assert np.array_equal(p.distances, np.ceil(raw.distances))
    assert not np.array_equal(p.distances, nint.distances)
    assert np.array_equal(raw.distances, datasets.read(HERE / "tsplib/eil51.tsp", rounding="exact").distances)


_TSP_HEAD = "NAME : bad\nTYPE : TSP\nDIMENSION : 3\nEDGE_WEIGHT_TYPE : EUC_2D\n"
_VRP = ("NAME : v\nTYPE : CVRP\nDIMENSION : 2\nCAPACITY : 5\nEDGE_WEIGHT_TYPE : EUC_2D\n"
        "NODE_COORD_SECTION\n1 0 0\n2 1 1\nDEMAND_SECTION\n1 0\n2 {demand}\nDEPOT_SECTION\n1\n-1\nEOF\n")


@pytest.mark.parametrize("text, error, message", [
    (b"garbage\x00\xff\xfe\n", ValueError, "bad.tsp: not a readable TSPLIB/CVRPLIB instance"),
    (b"hello world\n", ValueError, "bad.tsp: not a readable TSPLIB/CVRPLIB instance"),
    (_TSP_HEAD.encode() + b"EOF\n", ValueError, "bad.tsp: the file has no NODE_COORD_SECTION"),
    (_TSP_HEAD.encode() + b"NODE_COORD_SECTION\n1 0 0\n2 a b\n3 1 1\nEOF\n", ValueError,
     "bad.tsp: NODE_COORD_SECTION is not a table of numbers"),
    (_TSP_HEAD.encode() + b"NODE_COORD_SECTION\n1 0 0\n2 1 1\nEOF\n", ValueError,
     "bad.tsp: DIMENSION is 3 but the file has data for 2 node"),
    (_VRP.replace("DEMAND_SECTION\n1 0\n2 {demand}\n", "").encode(), ValueError,
     "bad.tsp: reading it as CVRP needs a DEMAND_SECTION and a CAPACITY"),
    (_VRP.format(demand=9).encode(), InvalidInstanceError, r"bad.tsp: demand of node 1 \(9\) exceeds the capacity 5"),
], ids=["binary", "text", "no-coords", "non-numeric", "dimension", "cvrp-without-demands", "invalid-data"])
def test_read_malformed_file_names_it(tmp_path, text, error, message):
    # one clear error naming the file (what `glns solve FILE` prints), never a KeyError or a bare parse error
    pytest.importorskip("vrplib")
    (tmp_path / "bad.tsp").write_bytes(text)
    with pytest.raises(error, match=message):
        datasets.read(tmp_path / "bad.tsp")


def test_read_missing_file(tmp_path):
    pytest.importorskip("vrplib")
    with pytest.raises(FileNotFoundError, match="nothere.vrp"):
        datasets.read(tmp_path / "nothere.vrp")


def test_read_with_the_wrong_problem():
    pytest.importorskip("vrplib")
    with pytest.raises(ValueError, match=r"A-n32-k5.vrp: a VRP file .* read it as 'cvrp' or 'ovrp', not 'tsp'"):
        datasets.read(HERE / "cvrplib/A/A-n32-k5.vrp", problem="tsp")
    for kind in ("cvrp", "ovrp"):
        with pytest.raises(ValueError, match=f"eil51.tsp: reading it as {kind.upper()} needs a DEMAND_SECTION"):
            datasets.read(HERE / "tsplib/eil51.tsp", problem=kind)
    with pytest.raises(ValueError, match="unknown problem 'pdptw'"):
        datasets.read(HERE / "tsplib/eil51.tsp", problem="pdptw")
    with pytest.raises(ValueError, match="eil51.tsp: reading it as VRPTW needs a DEMAND_SECTION"):
        datasets.read(HERE / "tsplib/eil51.tsp", problem="vrptw")


def test_missing_vrplib_message(monkeypatch):
    monkeypatch.setitem(sys.modules, "vrplib", None)  # makes `import vrplib` raise ImportError
    message = ("reading TSPLIB/CVRPLIB files needs the optional dependency vrplib: "
               "pip install 'glns[bench]' or pip install vrplib")
    with pytest.raises(ImportError, match=re.escape(message)):
        datasets.read(HERE / "tsplib/eil51.tsp")
    with pytest.raises(ImportError, match=re.escape(message)):
        datasets.read_solution(HERE / "cvrplib/A/A-n32-k5.sol")


# --- best-known values --------------------------------------------------------------------------


def test_best_known_shipped():
    assert datasets.best_known("eil51") == 426.0 and datasets.best_known("A-n32-k5") == 784.0
    assert datasets.best_known("X-n284-k15") == 20226.0
    assert datasets.best_known("not-an-instance") is None
    table = datasets._table("best_known.json")["instances"]
    assert len(table) == 187 and table["X-n284-k15"]["is_optimal"] is None


def test_best_known_table_matches_manifest():
    manifest = shared_dir() / "MANIFEST.csv"
    if not manifest.is_file():
        pytest.skip(f"{manifest} is absent")
    with open(manifest, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    table = datasets._table("best_known.json")["instances"]
    assert set(table) == {r["name"] for r in rows}
    for r in rows:
        entry = table[r["name"]]
        assert entry["best_known"] == float(r["best_known"]) and entry["set"] == r["set"]
        assert entry["is_optimal"] == {"true": True, "false": False, "unknown": None}[r["is_optimal"]]
