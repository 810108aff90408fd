"""The benchmark harness (glns.benchmark, `glns bench`): records, summaries, tables, resume,
solvers from modules, failures, library files, progress."""

from __future__ import annotations

import csv
import io
import json
import math
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import glns
from glns import datasets
from glns.benchmark import report
from glns.benchmark.instances import file_locator, load_instance, paper_locator
from glns.benchmark.runner import Progress, Settings, glns_curve, run_benchmark
from glns.benchmark.solvers import parse_solver
from glns.benchmark.suites import library_groups, synthetic_groups
from glns.cli import main
from glns.rng import run_seed

DATA = Path(__file__).parent / "data"


def bench(tmp_path: Path, *args: str, name: str = "out") -> dict:
    out = tmp_path / name
    assert main(["bench", *args, "--out", str(out), "--no-progress", "--workers", "1"]) == 0
    return json.loads((out / "results.json").read_text())


# ------------------------------------------------------------------------------- instances


def test_locators_rebuild_the_same_instances():
    p = load_instance(paper_locator("ovrp", 20, 5))
    q = datasets.paper_instances("ovrp", 20)[5]
    assert p.name == q.name and np.array_equal(p.distances, q.distances) and p.kind == "ovrp"
    f = load_instance(file_locator(DATA / "cvrplib" / "A" / "A-n32-k5.vrp", "exact", "ovrp"))
    assert f.kind == "ovrp" and f.distances[0, 1] != round(f.distances[0, 1])
    for bad in ("paper:cvrp:20", "paper:cvrp:x:1", "nope:1", "file:nint:cvrp"):
        with pytest.raises(ValueError, match="locator"):
            load_instance(bad)
    with pytest.raises(ValueError, match="has 64 instances"):
        load_instance("paper:cvrp:20:64")


def test_synthetic_groups_carry_the_shipped_references():
    (g,) = synthetic_groups(["cvrp"], [50], count=3)
    assert g.name == "cvrp50" and len(g) == 3 and g.size == 50
    assert g.references == datasets.reference_objectives("cvrp", 50)[:3].tolist()
    assert [load_instance(loc).name for loc in g.locators] == [p.name for p in g.instances]


def test_library_groups_by_set_with_best_known_values():
    groups = library_groups(data_dir=DATA)
    assert [g.name for g in groups] == ["tsplib", "cvrplib-A", "cvrplib-E", "cvrplib-P"]
    tsp = groups[0]
    assert [p.name for p in tsp.instances] == ["eil51", "berlin52"]   # smallest first
    assert tsp.references == [426.0, 7542.0]
    assert library_groups(["cvrplib"], DATA, sets=["E", "P"], max_nodes=14)[0].references == [247.0]
    exact = library_groups(["tsplib"], DATA, rounding="exact", count=1)[0]
    assert exact.name == "tsplib-exact" and exact.notes and len(exact) == 1
    with pytest.raises(FileNotFoundError, match="pass --data DIR or set GLNS_DATA"):
        library_groups(data_dir=DATA / "missing")
    with pytest.raises(ValueError, match="unknown CVRPLIB set 'Z'"):
        library_groups(data_dir=DATA, sets=["Z"])


def test_short_routes_keeps_the_files_whose_names_give_few_customers_per_route():
    from glns.benchmark.suites import mean_route_length

    assert mean_route_length("X-n101-k25.vrp") == 101 / 25
    assert mean_route_length("eil51.tsp") is None
    groups = library_groups(["tsplib", "cvrplib"], DATA, short_routes=5)
    # A-n32-k5 (6.4) and the TSPLIB files (no k) are left out; E-n13-k4 (3.25), P-n16-k8 (2) stay
    assert [(g.name, [p.name for p in g.instances]) for g in groups] == [
        ("cvrplib-E", ["E-n13-k4"]), ("cvrplib-P", ["P-n16-k8"])]
    assert "n / k < 5" in groups[0].notes[0]


def test_every_baseline_is_a_solver_name():
    from glns.benchmark.baselines import BASELINES
    from glns.benchmark.solvers import BASELINE_NAMES

    assert BASELINE_NAMES == tuple(BASELINES)
    assert parse_solver("hgs").label.startswith("HGS-CVRP")


# ---------------------------------------------------------------------------------- records


def test_glns_curve_is_the_best_so_far_at_each_improvement():
    res = glns.solve(datasets.generate_cvrp(30, 1), iterations=200, seed=3)
    curve = glns_curve(res)
    it = np.array(curve["iteration"])
    assert it[-1] == 200 and np.all(np.diff(it) > 0)
    assert np.array_equal(curve["cost"], res.best_curve[it - 1])
    assert np.all(np.diff(curve["cost"][:-1]) < 0) and curve["cost"][-1] == res.cost
    assert np.array_equal(curve["seconds"], res.curve_seconds[it - 1])
    # between two kept points the best did not change
    for a, b in zip(it[:-1], it[1:]):
        assert np.all(res.best_curve[a - 1:b - 1] == res.best_curve[a - 1])
    assert curve["restarts"] == res.restarts


def test_glns_curve_records_the_restarts():
    params = glns.SolveParams(restart=glns.Restart(stall=0.02))
    res = glns.solve(datasets.generate_cvrp(30, 1), iterations=500, seed=3, params=params)
    assert res.restarts >= 1 and glns_curve(res)["restarts"] == res.restarts


def _run(group, solver, cost, ref, seconds=1.0, solution=None, problem="cvrp", instance="i"):
    gap = None if cost is None or ref is None else 100 * (cost / ref - 1)
    return {"group": group, "problem": problem, "instance": instance, "solver": solver, "cost": cost,
            "reference": ref, "gap": gap, "seconds": seconds if cost is not None else None,
            "iterations": 10, "solution": solution, "batch_seconds": 5.0}


def test_summaries_leave_failed_runs_out_and_count_them():
    runs = [_run("g", "a", 11.0, 10.0, 1.0), _run("g", "a", 24.0, 20.0, 3.0), _run("g", "a", None, 30.0),
            _run("g", "b", 10.0, 10.0), _run("h", "a", 5.0, None)]
    s = {(x["group"], x["solver"]): x for x in report.summarise(runs)}
    a = s["g", "a"]
    assert (a["instances"], a["solved"], a["failed"]) == (3, 2, 1)
    assert a["mean_cost"] == 17.5 and a["mean_reference"] == 15.0
    assert math.isclose(a["mean_gap"], 15.0) and math.isclose(a["gap_of_means"], 100 * (17.5 / 15 - 1))
    assert a["mean_seconds"] == 2.0
    assert s["h", "a"]["mean_gap"] is None and s["h", "a"]["mean_reference"] is None
    assert s["g", "b"]["mean_gap"] == 0.0


def test_tables_show_means_gaps_and_times():
    runs = [_run("cvrp10", "x", 11.0, 10.0, 0.25), _run("cvrp10", "x", 21.0, 20.0, 0.75),
            _run("cvrp20", "x", None, 20.0)]
    summ = report.summarise(runs)
    md = report.markdown_tables(summ, {"x": "solver X"}, {"cvrp": "ref"}, "synthetic",
                                {"cvrp": {"paper row": {"cvrp10": 16.5}}}, extra_count=2)
    assert "| solver X | 16.0000 (+7.50 %), 500 ms | failed (1) |" in md
    assert "| reference: ref | 15.0000 | 20.0000 |" in md
    assert "| paper row | 16.5000 (+10.00 %) | – |" in md
    rows = list(csv.DictReader(io.StringIO(report.csv_text(summ, {"x": "solver X"}))))
    assert rows[0]["label"] == "solver X" and float(rows[0]["mean_cost"]) == 16.0
    assert rows[1]["mean_cost"] == "" and rows[1]["failed"] == "1"
    # library: a run with more routes than the k of its name is flagged
    lib = [_run("cvrplib-E", "x", 503.0, 534.0, solution=[[1]] * 4, instance="E-n30-k3")]
    text = report.markdown_tables(report.summarise(lib), {}, {}, "library")
    assert "-5.81 %" in text and "[1 ≠ k]" in text and "fix the fleet at exactly k" in text
    exact = [_run("cvrplib-E", "x", 534.0, 534.0, solution=[[1]] * 3, instance="E-n30-k3")]
    assert "≠ k" not in report.markdown_tables(report.summarise(exact), {}, {}, "library")


def test_environment_names_versions_and_machine():
    env = report.environment()
    assert env["glns"] == glns.__version__ and env["packages"]["numpy"] == np.__version__
    assert env["cores"] >= 1 and env["cpu"] and env["python"] == sys.version.split()[0]


# ----------------------------------------------------------------------------------- runs


def test_bench_records_are_the_runs_they_claim(tmp_path):
    doc = bench(tmp_path, "synthetic", "--problems", "cvrp", "tsp", "--sizes", "10", "20", "--instances", "3",
                "--iterations", "60", "--solvers", "default", "paper", "--seed", "7")
    assert doc["format"] == report.FORMAT and doc["settings"]["iterations"] == 60
    assert doc["environment"]["glns"] == glns.__version__
    assert len(doc["runs"]) == 2 * 2 * 2 * 3
    for r in doc["runs"]:
        i = int(r["locator"].rsplit(":", 1)[1])
        problem = load_instance(r["locator"])
        spec = parse_solver(r["solver"])
        res = glns.solve(problem, spec.destroy, spec.repair, iterations=60, seed=run_seed(7, i), params=spec.params)
        assert r["seed"] == run_seed(7, i) and r["cost"] == res.cost and r["iterations"] == 60
        assert problem.cost(r["solution"]) == r["cost"]
        ref = datasets.reference_objectives(r["problem"], problem.n_customers)[i]
        assert r["reference"] == ref and math.isclose(r["gap"], 100 * (res.cost / ref - 1))
        assert r["operators"]["destroy"] == [s.name for s in res.destroy_stats]
    summ = {(s["group"], s["solver"]): s for s in doc["summary"]}
    costs = [r["cost"] for r in doc["runs"] if r["group"] == "tsp20" and r["solver"] == "paper"]
    assert summ["tsp20", "paper"]["mean_cost"] == pytest.approx(np.mean(costs))
    md = (tmp_path / "out" / "summary.md").read_text()
    assert f"{np.mean(costs):.4f}" in md and "TSP: mean objective over 3 instances" in md
    rows = list(csv.DictReader(open(tmp_path / "out" / "summary.csv")))
    assert len(rows) == 8 and {r["solver"] for r in rows} == {"default", "paper"}


def test_bench_resumes_a_directory_and_refuses_other_settings(tmp_path, capsys):
    args = ["synthetic", "--problems", "ovrp", "--sizes", "10", "--instances", "2", "--iterations", "30"]
    first = bench(tmp_path, *args)
    out = tmp_path / "out"
    doc = json.loads((out / "results.json").read_text())
    doc["runs"] = [r for r in doc["runs"] if r["solver"] == "default"]   # as if killed after a batch
    (out / "results.json").write_text(json.dumps(doc))
    capsys.readouterr()
    again = bench(tmp_path, *args)
    assert "1 batches already in" in capsys.readouterr().err
    strip = lambda runs: [{k: v for k, v in r.items() if k not in ("seconds", "batch_seconds", "curve")} for r in runs]
    assert strip(again["runs"]) == strip(first["runs"])
    assert main(["bench", *args[:-1], "31", "--out", str(out), "--no-progress"]) == 2
    assert "holds results of a different benchmark" in capsys.readouterr().err


def test_bench_library_suite_on_files(tmp_path):
    doc = bench(tmp_path, "library", "--data", str(DATA), "--sets", "E", "P", "--iterations", "50",
                "--solvers", "default", "--rounding", "both")
    groups = [g["name"] for g in doc["groups"]]
    assert groups == ["tsplib", "cvrplib-E", "cvrplib-P", "tsplib-exact", "cvrplib-E-exact", "cvrplib-P-exact"]
    by = {(r["group"], r["instance"]): r for r in doc["runs"]}
    eil = by["tsplib", "eil51"]
    assert eil["reference"] == 426.0 and eil["cost"] == float(int(eil["cost"])) and eil["gap"] >= 0
    assert by["tsplib-exact", "eil51"]["cost"] != float(int(by["tsplib-exact", "eil51"]["cost"]))
    text = (tmp_path / "out" / "summary.md").read_text()
    assert "| tsplib | 2 |" in text and "+2.8 %" in text          # the paper's TSPLIB gap beside ours


def test_bench_module_solvers(tmp_path):
    ops = tmp_path / "my_ops.py"
    ops.write_text(textwrap.dedent('''
        import random

        def _rest(x, gone):
            return [[c for c in r if c not in gone] for r in x]

        def drop_random(x, k, problem_data, rng=random):
            customers = [c for r in x for c in r]
            removed = rng.sample(customers, min(k, len(customers)))
            return removed, [r for r in _rest(x, set(removed)) if r]

        DESTROY = [drop_random]
        REPAIR = "greedy_insertion"
        PROBLEMS = ["cvrp"]
    '''))
    doc = bench(tmp_path, "synthetic", "--problems", "cvrp", "tsp", "--sizes", "10", "--instances", "2",
                "--iterations", "40", "--solvers", f"module:{ops}")
    assert {r["solver"] for r in doc["runs"]} == {"module:my_ops"} and {r["group"] for r in doc["runs"]} == {"cvrp10"}
    assert all(r["cost"] is not None for r in doc["runs"])
    assert doc["runs"][0]["operators"]["destroy"] == ["drop_random"]
    with pytest.raises(ValueError, match="needs a G-LNS export"):
        parse_solver(f"population:{ops}")
    bare = tmp_path / "bare.py"
    bare.write_text("X = 1\n")
    with pytest.raises(ValueError, match="defines no DESTROY or REPAIR"):
        parse_solver(f"module:{bare}")


def test_a_crashing_run_is_recorded_and_the_batch_goes_on(tmp_path):
    ops = tmp_path / "crash_ops.py"
    ops.write_text(textwrap.dedent('''
        import os

        def crash_on_small(partial, removed, problem_data, rng=None):
            if len(problem_data["distance_matrix"]) < 12 and problem_data["demands"][1] % 2:
                os._exit(3)
            routes = [list(r) for r in partial]
            return routes + [[c] for c in removed]

        DESTROY = "random_removal"
        REPAIR = [crash_on_small]
    '''))
    doc = bench(tmp_path, "synthetic", "--problems", "cvrp", "--sizes", "10", "20", "--instances", "4",
                "--iterations", "20", "--solvers", f"module:{ops}")
    failed = [r for r in doc["runs"] if r["error"]]
    expect = [p.name for p in datasets.paper_instances("cvrp", 10)[:4] if p.demands[1] % 2]
    assert [r["instance"] for r in failed] == expect and expect
    assert all(r["error"].startswith("died") and r["cost"] is None for r in failed)
    s = {x["group"]: x for x in doc["summary"]}
    assert s["cvrp10"]["failed"] == len(expect) and s["cvrp20"]["failed"] == 0
    assert "failed]" in (tmp_path / "out" / "summary.md").read_text()


def test_bench_errors_are_clear(tmp_path, capsys):
    assert main(["bench", "library", "--data", str(tmp_path / "none"), "--out", str(tmp_path / "o")]) == 2
    assert "benchmark files not found" in capsys.readouterr().err
    assert main(["bench", "--solvers", "magic", "--out", str(tmp_path / "o")]) == 2
    assert "unknown solver 'magic'" in capsys.readouterr().err
    assert main(["bench", "--solvers", f"module:{tmp_path / 'nope.py'}", "--out", str(tmp_path / "o")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_progress_lines_show_counts_and_eta():
    groups = synthetic_groups(["tsp"], [10], count=3)
    stream = io.StringIO()
    run_benchmark(groups, [parse_solver("default"), parse_solver("paper")], Settings(iterations=20, workers=1),
                  stream=stream)
    lines = stream.getvalue().splitlines()
    assert "[1/2] tsp10 default: 3/3, " in lines[0] and "ETA" in lines[0] and "(all: " in lines[0]
    assert lines[-1].startswith("[2/2] tsp10 paper: 3/3")
    p = Progress([(groups[0], parse_solver("default"))], Settings(time_limit=5.0), workers=2, stream=io.StringIO())
    assert p._estimate(parse_solver("default")) == 1.0   # nothing measured yet


def test_plots_read_a_bench_directory(tmp_path):
    pytest.importorskip("matplotlib")
    from glns.plot import convergence_figure

    doc = bench(tmp_path, "synthetic", "--problems", "cvrp", "--sizes", "10", "--instances", "3",
                "--iterations", "50", "--solvers", "default", "paper")
    fig = convergence_figure(tmp_path / "out")
    ends = {line.get_gid(): line.get_ydata()[-1] for line in fig.axes[0].lines
            if (line.get_gid() or "").startswith("solver:")}
    means = {f"solver:{s['solver']}": s["mean_cost"] for s in doc["summary"]}
    assert ends == pytest.approx(means)
    for kind in ("convergence", "weights", "synergy"):
        target = tmp_path / f"{kind}.svg"
        assert main(["plot", kind, str(tmp_path / "out"), "-o", str(target)]) == 0
        assert target.read_bytes().lstrip().startswith(b"<?xml")


def test_paper_suite_runs_implied_baselines_where_the_paper_has_them(monkeypatch):
    from glns.benchmark.cli import _solvers

    pytest.importorskip("ortools")
    pytest.importorskip("elkai")
    specs = {s.name: s for s in _solvers(["default", "baselines"], "paper")[0]}
    assert specs["ortools"].solves("cvrp") and not specs["ortools"].solves("tsp")
    assert specs["lkh"].solves("tsp") and not specs["lkh"].solves("cvrp")
    assert specs["default"].solves("tsp")
    assert {s.name: s for s in _solvers(["ortools"], "paper")[0]}["ortools"].solves("tsp")   # named: everywhere
    monkeypatch.setitem(sys.modules, "elkai", None)                 # as if not installed
    specs, skipped = _solvers(["baselines"], "synthetic")
    assert "lkh" not in {s.name for s in specs} and "pip install 'glns[bench]'" in skipped["lkh"]
    with pytest.raises(ImportError, match="solver 'lkh' is not available"):
        _solvers(["lkh"])


def test_a_resumed_directory_may_use_other_workers(tmp_path, capsys):
    args = ["synthetic", "--problems", "tsp", "--sizes", "10", "--instances", "2", "--iterations", "30"]
    bench(tmp_path, *args)
    capsys.readouterr()
    assert main(["bench", *args, "--out", str(tmp_path / "out"), "--no-progress", "--workers", "2"]) == 0
    assert "2 batches already in" in capsys.readouterr().err


def test_budgets_per_solver_kind():
    pytest.importorskip("elkai")
    s = Settings(iterations=300, time_limit=2.0, lkh_runs=3, glns_time_limit=None)
    assert s.budget_of(parse_solver("default")) == {"iterations": 300}
    assert s.budget_of(parse_solver("lkh")) == {"iterations": 3}          # LKH runs, not LNS iterations
    assert s.budget_of(parse_solver("ortools")) == {"time_limit": 2.0}
    assert s.budget_of(parse_solver("alns")) == {"iterations": 300}
    assert Settings(glns_time_limit=0.5).budget_of(parse_solver("paper")) == {"time_limit": 0.5}


def test_bench_runs_an_evolution_export_best_pair_and_populations(tmp_path):
    from glns.evolution import load_module
    from glns.evolution.export import export_module
    from glns.evolution.population import Member
    from glns.offline_llm.corpus import good_entries

    def member(kind, i, mid):
        e = good_entries("cvrp", kind)[i]
        return Member(mid, kind, e.source(kind), kind, e.idea, "i1" if kind == "destroy" else "i2")

    destroy = [member("destroy", 0, "d0"), member("destroy", 1, "d1")]
    repair = [member("repair", 0, "r0"), member("repair", 1, "r1")]
    path = export_module(tmp_path / "best_operators.py", destroy, repair, (destroy[1], repair[0]),
                         {"problem": "cvrp"})
    doc = bench(tmp_path, "synthetic", "--problems", "cvrp", "tsp", "--sizes", "10", "--instances", "2",
                "--iterations", "30", "--solvers", f"module:{path}", f"population:{path}")
    assert {r["group"] for r in doc["runs"]} == {"cvrp10"}          # evolved for CVRP only
    by = {(r["solver"], r["instance"]): r for r in doc["runs"]}
    module = load_module(path)
    for i, p in enumerate(datasets.paper_instances("cvrp", 10)[:2]):
        best = glns.solve(p, module, iterations=30, seed=run_seed(0, i))
        pop = glns.solve(p, module.DESTROY, module.REPAIR, iterations=30, seed=run_seed(0, i))
        assert by["module:best_operators", p.name]["cost"] == best.cost
        assert by["population:best_operators", p.name]["cost"] == pop.cost
        assert len(by["population:best_operators", p.name]["operators"]["destroy"]) == 2
        assert len(by["module:best_operators", p.name]["operators"]["destroy"]) == 1
    assert "(best pair)" in doc["solvers"]["module:best_operators"]["label"]


def test_retry_failed_reruns_the_batches_with_failed_runs(tmp_path, capsys):
    args = ["synthetic", "--problems", "cvrp", "--sizes", "10", "--instances", "3", "--iterations", "30"]
    first = bench(tmp_path, *args)
    path = tmp_path / "out" / "results.json"
    doc = json.loads(path.read_text())
    lost = doc["runs"][1]
    lost.update(cost=None, gap=None, solution=None, error="died: the worker process was killed")
    path.write_text(json.dumps(doc))
    kept = bench(tmp_path, *args)                        # plain resume keeps the failure
    assert kept["runs"][1]["error"] and kept["summary"][0]["failed"] == 1
    capsys.readouterr()
    again = bench(tmp_path, *args, "--retry-failed")
    assert "1 batches already in" in capsys.readouterr().err   # of 2: the one with the failure reruns
    assert again["runs"][1]["error"] is None and again["runs"][1]["cost"] == first["runs"][1]["cost"]
    assert again["summary"][0]["failed"] == 0


def test_an_ablated_run_says_so_in_its_labels_and_record(tmp_path, monkeypatch):
    monkeypatch.setenv("GLNS_ABLATE", "swap_star")
    doc = bench(tmp_path, "synthetic", "--problems", "cvrp", "--sizes", "10", "--instances", "1",
                "--iterations", "20", "--solvers", "default")
    assert doc["environment"]["ablated"] == ["swap_star"]
    assert doc["solvers"]["default"]["label"].endswith("without swap_star")
    assert "without swap_star" in (tmp_path / "out" / "summary.md").read_text()
