"""`glns bench` for the issue-13 runs: budgets proportional to size (--time-per-100), every K-th
file by size (--every), the large folder (set X beyond n = 298, XXL, large TSP files and their
INDEX.csv best-known values), resume refusal on other budgets, and `glns bench compare`.

The data folders are tiny VRPLIB files written into tmp_path in the layout of shared/data."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from glns import datasets
from glns.benchmark import report
from glns.benchmark.compare import compare_runs
from glns.benchmark.instances import file_locator, load_instance, read_file
from glns.benchmark.runner import Settings, run_benchmark
from glns.benchmark.solvers import parse_solver
from glns.benchmark.suites import every_kth, large_best_known, library_groups
from glns.cli import main
from glns.rng import run_seed

pytest.importorskip("vrplib")


def write_vrp(path: Path, n: int, seed: int, kind: str = "CVRP", weights: str = "EUC_2D") -> Path:
    """A VRPLIB file with n nodes (VRP: the depot first) on a 100 x 100 integer grid."""
    rng = np.random.default_rng(seed)
    xy = rng.integers(0, 100, size=(n, 2))
    lines = [f"NAME : \t{path.stem}\t", f"TYPE : \t{kind}\t", f"DIMENSION : \t{n}\t",
             f"EDGE_WEIGHT_TYPE : \t{weights}\t"]
    if kind == "CVRP":
        lines.append("CAPACITY : \t30\t")
    lines += ["NODE_COORD_SECTION"] + [f"{i + 1}\t{x}\t{y}" for i, (x, y) in enumerate(xy)]
    if kind == "CVRP":
        demand = [0] + rng.integers(1, 10, size=n - 1).tolist()
        lines += ["DEMAND_SECTION"] + [f"{i + 1}\t{q}" for i, q in enumerate(demand)]
        lines += ["DEPOT_SECTION", "\t1\t", "\t-1\t"]
    else:
        lines[1:1] = ["VEHICLES : 1"]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines + ["EOF", ""]))
    return path


#: (folder, name, nodes, kind, weights) of the fake data folder; names of set X that the shipped
#: best-known table has (cvrplib/X) or not (large/X), so both lookups are exercised
FILES = [("cvrplib/X", "X-n101-k25", 9, "CVRP", "EUC_2D"), ("cvrplib/X", "X-n106-k14", 12, "CVRP", "EUC_2D"),
         ("large/X", "X-n303-k21", 15, "CVRP", "EUC_2D"), ("large/X", "X-n1001-k43", 21, "CVRP", "EUC_2D"),
         ("large/X", "X-n313-k71", 15, "CVRP", "EUC_2D"),
         ("large/XXL", "Leuven1", 14, "CVRP", "EUC_2D"), ("large/XXL", "Ghent1", 11, "CVRP", "EUC_2D"),
         ("large/TSP", "dsj1000", 10, "TSP", "CEIL_2D"), ("large/TSP", "fnl4461", 13, "TSP", "EUC_2D")]
INDEX = {"X-n303-k21": 21736, "X-n1001-k43": 72355, "X-n313-k71": 94043, "Leuven1": 192848,
         "Ghent1": 469531, "dsj1000": 18660188, "fnl4461": 182566}


@pytest.fixture
def data(tmp_path: Path) -> Path:
    base = tmp_path / "data"
    for folder, name, n, kind, weights in FILES:
        write_vrp(base / folder / f"{name}.vrp", n, seed=n, kind=kind, weights=weights)
    rows = ["set,name,dimension,best_known,optimal,local_path,solution_file"]
    rows += [f"{folder.split('/')[1]},{name},{n},{INDEX[name]},,{folder.split('/')[1]}/{name}.vrp,"
             for folder, name, n, _, _ in FILES if folder.startswith("large")]
    (base / "large" / "INDEX.csv").write_text("\n".join(rows) + "\n")
    return base


def bench(out: Path, *args: str) -> int:
    return main(["bench", *args, "--out", str(out), "--no-progress", "--workers", "1"])


# ---------------------------------------------------------------------------------- budgets


def test_time_per_100_scales_every_timed_solver_with_the_instance():
    pytest.importorskip("elkai")
    s = Settings(iterations=300, time_per_100=2.4)
    for name in ("default", "paper", "ortools", "pyvrp", "lkh"):
        spec = parse_solver(name)
        assert s.budget_of(spec, 250) == {"time_limit": pytest.approx(6.0)}, name
        assert s.budget_of(spec) == {"time_per_100": 2.4}          # the rule, as recorded
        assert s.expected_seconds(spec, 1000) == pytest.approx(24.0)
    assert s.budget_of(parse_solver("alns"), 250) == {"iterations": 300}   # iteration-based
    assert s.timeout_of({"time_limit": 6.0}) == 72.0                      # 2 T + 60 s
    assert s.timeout_of({"iterations": 300}) is None
    assert Settings(task_timeout=30.0).timeout_of({"time_limit": 6.0}) == 30.0
    assert Settings(time_limit=2.0).timeout_of(Settings(time_limit=2.0).budget_of(parse_solver("pyvrp"))) == 64.0
    for bad in (0.0, -1.0, float("inf")):
        with pytest.raises(ValueError, match="time_per_100"):
            Settings(time_per_100=bad)


def test_glns_runs_get_their_own_time_and_seed_position(data):
    # every 2nd file: X-n101 (8 customers, position 0) and X-n303 (14 customers, position 2)
    (group,) = library_groups(["cvrplib"], data, sets=["X"], every=2, count=2)
    assert [p.n_customers for p in group.instances] == [8, 14] and group.seed_positions() == [0, 2]
    records = run_benchmark([group], [parse_solver("default")], Settings(time_per_100=2.0, seed=5, workers=1),
                            progress=False)
    assert [r["seed"] for r in records] == [run_seed(5, 0), run_seed(5, 2)]
    assert all(r["error"] is None for r in records)
    # a time limit of 0.16 s and 0.28 s: each run takes at least its own
    assert records[0]["seconds"] >= 0.15 and records[1]["seconds"] >= 0.27
    assert records[1]["seconds"] > records[0]["seconds"]


# ---------------------------------------------------------------------------- instance files


def test_every_kth_file_by_size(tmp_path):
    files = [write_vrp(tmp_path / f"f{i}.vrp", n, seed=i) for i, n in enumerate([30, 10, 20, 10, 50, 40, 60])]
    picked = every_kth(files, 4)
    assert [(i, p.name) for i, p in picked] == [(0, "f1.vrp"), (4, "f5.vrp")]   # 10 10 20 30 | 40 50 60
    assert [p.name for _, p in every_kth(files, None)] == ["f1.vrp", "f3.vrp", "f2.vrp", "f0.vrp",
                                                           "f5.vrp", "f4.vrp", "f6.vrp"]
    with pytest.raises(ValueError, match="every must be at least 1"):
        every_kth(files, 0)


def test_set_x_takes_the_large_folder_and_its_best_known_values(data):
    (x,) = library_groups(["cvrplib"], data, sets=["X"])
    assert [p.name for p in x.instances] == ["X-n101-k25", "X-n106-k14", "X-n303-k21", "X-n313-k71", "X-n1001-k43"]
    assert x.references[:2] == [datasets.best_known("X-n101-k25"), datasets.best_known("X-n106-k14")]
    assert x.references[2:] == [21736.0, 94043.0, 72355.0] and x.positions is None and not x.notes
    (quarter,) = library_groups(["cvrplib"], data, sets=["X"], every=4)
    assert [p.name for p in quarter.instances] == ["X-n101-k25", "X-n1001-k43"] and quarter.positions == [0, 4]
    assert "every 4-th file by size" in quarter.notes[0]


def test_xxl_and_large_tsp_groups(data):
    xxl, tsp = library_groups(["xxl", "tsp-large"], data)
    assert (xxl.name, xxl.problem, [p.name for p in xxl.instances]) == ("xxl", "cvrp", ["Ghent1", "Leuven1"])
    assert xxl.references == [469531.0, 192848.0]
    assert (tsp.name, tsp.problem, tsp.references) == ("tsp-large", "tsp", [18660188.0, 182566.0])
    assert any("CEIL_2D" in note for note in tsp.notes)
    assert large_best_known(data)["fnl4461"] == 182566.0


def test_ceil_2d_files_round_up_and_rebuild_from_their_locator(data):
    path = data / "large" / "TSP" / "dsj1000.vrp"
    p, raw = read_file(path), read_file(path, "exact")
    assert np.array_equal(p.distances, np.ceil(raw.distances)) and not np.array_equal(p.distances, np.round(raw.distances))
    q = load_instance(file_locator(path, "nint", "tsp"))
    assert np.array_equal(q.distances, p.distances) and q.kind == "tsp" and q.name == "dsj1000"


def test_missing_large_files_are_said_clearly(data, tmp_path):
    (data / "large" / "INDEX.csv").unlink()
    assert large_best_known(data) == {}
    with pytest.raises(FileNotFoundError, match="INDEX.csv not found"):
        library_groups(["xxl"], data)
    (x,) = library_groups(["cvrplib"], data, sets=["X"])
    assert x.references[2:] == [None, None, None] and "no best-known value for 3 file(s)" in x.notes[-1]
    only_small = tmp_path / "small"
    write_vrp(only_small / "cvrplib" / "X" / "X-n101-k25.vrp", 9, seed=9)
    (x,) = library_groups(["cvrplib"], only_small, sets=["X"])
    assert len(x) == 1 and "not found: set X has only the files of cvrplib/X" in x.notes[0]
    with pytest.raises(FileNotFoundError, match="--libraries tsp-large needs the large benchmark files"):
        library_groups(["tsp-large"], only_small)


# ------------------------------------------------------------------------------ command line


def test_bench_records_the_budget_rule_and_refuses_another_on_resume(data, tmp_path, capsys):
    out = tmp_path / "out"
    args = ["library", "--data", str(data), "--libraries", "xxl", "--solvers", "default", "--time-per-100", "1"]
    assert bench(out, *args) == 0
    doc = json.loads((out / "results.json").read_text())
    assert doc["settings"]["time_per_100"] == 1.0 and doc["solvers"]["default"]["budget"] == {"time_per_100": 1.0}
    assert [r["gap"] is not None and r["error"] is None for r in doc["runs"]] == [True, True]
    capsys.readouterr()
    assert bench(out, *args) == 0 and "1 batches already in" in capsys.readouterr().err
    assert bench(out, *args[:-1], "2") == 2
    assert "holds results of a different benchmark" in capsys.readouterr().err
    assert bench(out, *args[:-2]) == 2                          # no rule: iterations, also another
    assert bench(out, *args, "--every", "2") == 2               # other files
    capsys.readouterr()
    assert bench(tmp_path / "o2", *args, "--time-limit", "3") == 2
    assert "leave out --time-limit" in capsys.readouterr().err
    assert main(["bench", "synthetic", "--every", "2", "--out", str(tmp_path / "o3")]) == 2
    assert "--every selects files of the library suite" in capsys.readouterr().err


def test_baseline_labels_and_per_instance_budgets(data, tmp_path):
    pytest.importorskip("pyvrp")
    out = tmp_path / "out"
    assert bench(out, "library", "--data", str(data), "--libraries", "xxl", "--solvers", "pyvrp",
                 "--time-per-100", "2") == 0
    doc = json.loads((out / "results.json").read_text())
    assert doc["solvers"]["pyvrp"]["label"].endswith(" 2 s per 100 customers")
    by = {r["instance"]: r for r in doc["runs"]}
    assert by["Ghent1"]["error"] is None and by["Leuven1"]["error"] is None
    assert by["Leuven1"]["seconds"] > by["Ghent1"]["seconds"] >= 0.19      # 0.26 s and 0.2 s


def test_lkh_runs_for_a_time_with_a_seed():
    pytest.importorskip("elkai")
    from glns.benchmark.baselines import lkh, run_baseline
    from glns.benchmark.baselines._common import integer_distances

    p = datasets.generate_tsp(40, 1)
    run = run_baseline("lkh", p, time_limit=0.3, seed=7)
    assert p.violation(run.solution) is None and run.solution[0] == 0
    assert run.info["time_limit"] == 0.3 and run.info["seed"] == 7 and 0.25 <= run.seconds < 5
    assert run.curve["cost"] == [pytest.approx(p.cost(run.solution), rel=1e-5)]
    dist, scale = integer_distances(p)
    assert "EDGE_WEIGHT_TYPE : EUC_2D" in lkh._problem_text(p, dist, scale)      # coordinates suffice
    import glns

    matrix_only = glns.TSP(distances=p.distances)
    assert "EXPLICIT" in lkh._problem_text(matrix_only, dist, scale)
    assert run_baseline("lkh", matrix_only, time_limit=0.3).solution[0] == 0


# ---------------------------------------------------------------------------------- compare


def _doc(costs: dict[tuple[str, str], float | None], time_per_100: float) -> dict:
    runs = [{"group": "cvrplib-X", "problem": "cvrp", "instance": inst, "solver": solver, "cost": cost,
             "reference": 100.0, "gap": None if cost is None else cost - 100.0, "seconds": 1.0,
             "iterations": None, "solution": None, "error": None if cost is not None else "timeout: ..."}
            for (solver, inst), cost in costs.items()]
    return {"format": report.FORMAT, "settings": {"time_per_100": time_per_100}, "runs": runs}


def test_compare_lists_the_instances_where_the_longer_run_is_worse(tmp_path, capsys):
    a = _doc({("default", "x1"): 110.0, ("default", "x2"): 105.0, ("default", "x3"): 104.0,
              ("pyvrp", "x1"): 103.0, ("pyvrp", "x2"): 101.0}, 2.4)
    b = _doc({("default", "x1"): 108.0, ("default", "x3"): 104.5, ("pyvrp", "x1"): 103.0,
              ("pyvrp", "x2"): None}, 24.0)
    rows = {r["solver"]: r for r in compare_runs(a, b)}
    assert (rows["default"]["common"], rows["default"]["better"], rows["default"]["equal"]) == (2, 1, 0)
    assert [(x["instance"], y["cost"]) for x, y in rows["default"]["worse"]] == [("x3", 104.5)]
    assert rows["default"]["mean_gap_a"] == pytest.approx(7.0) and rows["default"]["mean_gap_b"] == pytest.approx(6.25)
    assert [y["cost"] for _, y in rows["pyvrp"]["worse"]] == [None] and rows["pyvrp"]["equal"] == 1
    for name, doc in (("a", a), ("b", b)):
        report.write_outputs(tmp_path / name, doc, "", "")
    assert main(["bench", "compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 1
    text = capsys.readouterr().out
    assert "2.4 s per 100 customers" in text and "B is worse than A on 2 run(s)" in text
    assert "| default | cvrplib-X | x3 | 104 | 104.5 |" in text and "| failed |" in text
    assert main(["bench", "compare", str(tmp_path / "b"), str(tmp_path / "b")]) == 0
    assert "B is worse than A on no instance" in capsys.readouterr().out
    assert main(["bench", "compare", str(tmp_path / "a")]) == 2
    assert "takes two result directories" in capsys.readouterr().err


def test_library_table_has_a_row_over_all_groups():
    runs = [{"group": g, "problem": "cvrp", "solver": "default", "instance": f"{g}{i}", "cost": 1.0 + gap / 100,
             "reference": 1.0, "gap": gap, "seconds": 1.0, "iterations": None, "solution": None}
            for g, gaps in (("cvrplib-A", [1.0, 2.0, 3.0]), ("xxl", [10.0])) for i, gap in enumerate(gaps)]
    text = report.markdown_tables(report.summarise(runs), {}, {}, "library")
    assert "| all | 4 | +4.00 %, 1.00 s |" in text                  # per file: (1 + 2 + 3 + 10) / 4
