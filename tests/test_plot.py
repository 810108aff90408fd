"""glns.plot and `glns plot`: convergence curves, route drawings, weight and synergy heatmaps."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("matplotlib")

import glns  # noqa: E402
from glns import cli  # noqa: E402
from glns.benchmark.instances import load_instance, paper_locator  # noqa: E402
from glns.plot import (convergence_figure, mean_curve, route_figure, run_record,  # noqa: E402
                       save_figure, synergy_figure, weights_figure)
from glns.plot.heatmaps import synergy_tables, weight_tables  # noqa: E402
from glns.plot.routes import route_paths  # noqa: E402

from conftest import make_problem  # noqa: E402

DATA = Path(__file__).with_name("data")
PNG = b"\x89PNG\r\n\x1a\n"


def run(group, instance, solver, curve, iterations=None, seconds=1.0, cost=None, reference=None,
        operators=None, error=None, locator=None, solution=None):
    """A run record as `glns bench` writes it; curve = (iterations or None, seconds, costs)."""
    its, secs, costs = curve
    return {"group": group, "problem": "cvrp", "instance": instance, "locator": locator,
            "solver": solver, "seed": 0, "cost": costs[-1] if cost is None and error is None else cost,
            "reference": reference, "gap": None, "seconds": seconds, "iterations": iterations,
            "solution": solution, "curve": {"iteration": its, "seconds": secs, "cost": costs},
            "operators": operators, "error": error}


def ops(dw, rw, syn, destroy=("d_a",), repair=("r_a", "r_b")):
    return {"destroy": list(destroy), "repair": list(repair), "destroy_weights": dw, "repair_weights": rw,
            "destroy_calls": [1] * len(destroy), "repair_calls": [1] * len(repair), "synergy": syn}


def results(runs):
    return {"format": "glns-bench/1", "settings": {"iterations": 10},
            "solvers": {"a": {"label": "solver A"}, "b": {"label": "solver B"}, "gls": {"label": "GLS"}},
            "runs": runs}


RUNS = [
    run("g1", "i1", "a", ([0, 2, 5], [0.1, 0.2, 0.5], [10.0, 8.0, 6.0]), iterations=10, reference=5.0,
        operators=ops([1.0], [0.5, 1.5], [[2.0, 4.0]])),
    run("g1", "i2", "a", ([1, 4], [0.2, 0.4], [20.0, 12.0]), iterations=8, reference=11.0,
        operators=ops([3.0], [1.5, 0.5], [[6.0, 0.0]])),
    run("g1", "i1", "b", ([0, 6], [0.05, 0.3], [9.0, 7.0]), iterations=10, reference=5.0,
        operators=ops([2.0, 4.0], [1.0], [[1.0], [3.0]], destroy=("d_a", "d_b"), repair=("r_a",))),
    run("g1", "i2", "b", ([0], [0.05], [13.0]), iterations=10, reference=11.0, cost=None, error="boom"),
    run("g1", "i1", "gls", (None, [0.01, 1.0], [9.5, 6.5]), reference=5.0),
    run("g1", "i2", "gls", (None, [0.02, 2.0], [15.0, 12.5]), reference=11.0),
    run("g2", "i3", "a", ([0, 3], [0.1, 0.3], [5.0, 4.0]), iterations=10,
        operators=ops([1.0], [1.0, 1.0], [[1.0, 1.0]])),
]


def lines_by_gid(ax):
    return {line.get_gid(): line for line in ax.lines if line.get_gid()}


def legend_texts(ax):
    return [t.get_text() for t in ax.get_legend().get_texts()]


# ---------------------------------------------------------------------------- convergence
def test_mean_curve_is_the_mean_of_the_step_functions():
    grid, mean = mean_curve([([0, 2, 5], [10, 8, 6], 10), ([1, 4], [20, 12], 8)])
    # starts at 1 (where both curves exist), ends at the longer run's end
    assert grid.tolist() == [1, 2, 4, 5, 10]
    assert mean.tolist() == [(10 + 20) / 2, (8 + 20) / 2, (8 + 12) / 2, (6 + 12) / 2, (6 + 12) / 2]
    # three curves (a mean, not a median); the third ends early and keeps its last value
    grid, mean = mean_curve([([0, 2], [9, 3], 4), ([0], [30], 6), ([1, 5], [6, 0], 5)])
    assert grid.tolist() == [1, 2, 5, 6]
    assert mean.tolist() == [15.0, 13.0, 11.0, 11.0]


def test_convergence_lines_are_hand_computed_means_one_per_solver():
    fig = convergence_figure(results(RUNS), x="iteration", group="g1")
    (ax,) = fig.axes
    lines = lines_by_gid(ax)
    assert set(lines) == {"solver:a", "solver:b", "reference"}
    a = lines["solver:a"]
    assert list(a.get_xdata()) == [1, 2, 4, 5, 10]
    assert list(a.get_ydata()) == [15.0, 14.0, 10.0, 9.0, 9.0]
    # solver b: the failed run is left out and counted; the other is drawn alone
    b = lines["solver:b"]
    assert list(b.get_xdata()) == [0, 6, 10] and list(b.get_ydata()) == [9.0, 7.0, 7.0]
    # the reference line is the mean over the group's instances
    assert list(lines["reference"].get_ydata()) == [8.0, 8.0]
    texts = legend_texts(ax)
    assert "solver B (1 of 2 runs failed, left out)" in texts
    assert "GLS: no iteration counts (not shown)" in texts
    assert ax.get_xscale() == "linear"


def test_convergence_in_seconds_is_log_scaled_and_includes_solvers_without_iterations():
    fig = convergence_figure(results(RUNS), x="seconds", group=["g1"], solvers=["a", "gls"])
    (ax,) = fig.axes
    lines = lines_by_gid(ax)
    assert set(lines) == {"solver:a", "solver:gls", "reference"}
    gls = lines["solver:gls"]
    assert list(gls.get_xdata()) == [0.02, 1.0, 2.0]
    assert list(gls.get_ydata()) == [(9.5 + 15.0) / 2, (6.5 + 15.0) / 2, (6.5 + 12.5) / 2]
    a = lines["solver:a"]   # ends at the longer run's wall time (seconds = 1.0)
    assert list(a.get_xdata()) == [0.2, 0.4, 0.5, 1.0]
    assert list(a.get_ydata()) == [14.0, 10.0, 9.0, 9.0]
    assert ax.get_xscale() == "log"


def test_convergence_has_a_panel_per_group_and_x_axis():
    fig = convergence_figure(results(RUNS), x="both")
    assert len(fig.axes) == 4
    titles = [ax.get_title() for ax in fig.axes]
    assert titles == ["g1 (CVRP), 2 instances", "g2 (CVRP), 1 instance"] * 2
    assert [ax.get_xscale() for ax in fig.axes] == ["linear", "linear", "log", "log"]
    # g2 has no reference: no reference line
    assert "reference" not in lines_by_gid(fig.axes[1])


@pytest.mark.parametrize("kwargs, message", [
    (dict(group="nope"), "no group 'nope' in the results (groups: g1, g2)"),
    (dict(solvers=["a", "zz"]), "no solver 'zz' in the results (solvers: a, b, gls)"),
    (dict(group="g2", solvers="b"), "no solver 'b' in the results (solvers: a)"),
    (dict(x="cost"), "x must be 'iteration', 'seconds' or 'both'"),
])
def test_convergence_errors(kwargs, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        convergence_figure(results(RUNS), **kwargs)


def test_convergence_rejects_malformed_curves():
    bad = [run("g", "i", "a", ([0, 3, 1], [0.1, 0.2, 0.3], [3.0, 2.0, 1.0]), iterations=5)]
    with pytest.raises(ValueError, match="run of 'a' on 'i': curve 'iteration' is not sorted"):
        convergence_figure(bad)
    bad = [run("g", "i", "a", ([0, 3], [0.1, 0.2], [3.0]), iterations=5)]
    with pytest.raises(ValueError, match="equal length"):
        convergence_figure(bad)


def test_convergence_from_results_of_glns_solve():
    problem = make_problem("cvrp", 15, 3, 30)
    res = [glns.solve(problem, iterations=40, seed=s) for s in (1, 2)]
    rec = run_record(res[0])
    assert rec["curve"]["cost"][0] == res[0].best_curve[0] and rec["curve"]["cost"][-1] == res[0].cost
    cost = rec["curve"]["cost"]
    assert all(b < a for a, b in zip(cost[:-1], cost[1:-1]))   # improvements, then the last iteration
    assert rec["curve"]["iteration"][-1] == 40 and cost[-1] <= cost[-2]
    fig = convergence_figure({"seed-1": res[0], "both": res})
    lines = lines_by_gid(fig.axes[0])
    assert set(lines) == {"solver:seed-1", "solver:both"}
    assert lines["solver:seed-1"].get_ydata()[-1] == pytest.approx(res[0].cost)
    assert lines["solver:both"].get_ydata()[-1] == pytest.approx((res[0].cost + res[1].cost) / 2)
    assert lines["solver:both"].get_xdata()[-1] == 40


# ---------------------------------------------------------------------------- routes
def route_lines(fig):
    ax = fig.axes[0]
    return [line for line in ax.lines if (line.get_gid() or "").startswith("route:")]


@pytest.mark.parametrize("kind", ["cvrp", "ovrp"])
def test_route_figure_draws_one_line_per_route(kind):
    problem = make_problem(kind, 8, 1, 50)
    solution = [[3, 1], [], [2, 5, 4], [6, 7, 8]]
    fig = route_figure(problem, solution)
    lines = route_lines(fig)
    assert len(lines) == 3                      # the empty route is not drawn
    xy = problem.coords
    for line, route in zip(lines, [[3, 1], [2, 5, 4], [6, 7, 8]]):
        nodes = [0] + route + ([0] if kind == "cvrp" else [])   # OVRP routes stay open
        assert np.array_equal(np.column_stack([line.get_xdata(), line.get_ydata()]), xy[nodes])
    assert len({tuple(line.get_color()) for line in lines}) == 3
    title = fig.axes[0].get_title()
    assert f"cost {problem.cost(solution):.6g}" in title and "3 routes" in title
    # the depot is marked
    assert any(t.get_text() == "depot" for t in fig.axes[0].get_legend().get_texts())
    # an infeasible solution is still drawn, and the title says why it is infeasible
    tight = make_problem(kind, 8, 1, 12)
    assert "infeasible: route 2: capacity exceeded" in route_figure(tight, solution).axes[0].get_title()


def test_route_figure_closes_a_tsp_tour_and_takes_a_result():
    problem = make_problem("tsp", 6, 2, 0)
    res = glns.solve(problem, iterations=20, seed=0)
    (line,) = route_lines(route_figure(problem, res, title="tour"))
    tour = list(res.solution) + [res.solution[0]]
    assert np.array_equal(np.column_stack([line.get_xdata(), line.get_ydata()]), problem.coords[tour])
    assert route_paths(problem, [0, 1, 2, 3, 4, 5])[0].shape == (7, 2)


def test_route_figure_errors():
    no_coords = glns.CVRP(distances=np.ones((3, 3)) - np.eye(3), demands=[0, 1, 1], capacity=5)
    with pytest.raises(ValueError, match="needs node coordinates; this instance has only a distance matrix"):
        route_figure(no_coords, [[1, 2]])
    problem = make_problem("cvrp", 4, 1, 20)
    with pytest.raises(ValueError, match=r"node 7 is not a customer of this instance \(ids 1..4\)"):
        route_figure(problem, [[1, 7]])
    with pytest.raises(ValueError, match="a CVRP solution must be a list of routes"):
        route_figure(problem, [1, 2, 3, 4])


# ---------------------------------------------------------------------------- heatmaps
def image(ax):
    return np.ma.filled(ax.images[0].get_array().astype(float), np.nan)


def test_synergy_heatmap_is_the_mean_synergy_per_group_and_solver():
    fig = synergy_figure(results(RUNS), group="g1")
    axes = [ax for ax in fig.axes if ax.images]
    assert len(axes) == 2          # solver a and solver b (its failed run is left out)
    assert np.array_equal(image(axes[0]), [[4.0, 2.0]])
    assert np.array_equal(image(axes[1]), [[1.0], [3.0]])
    assert [t.get_text() for t in axes[0].get_xticklabels()] == ["r_a", "r_b"]
    assert [t.get_text() for t in axes[1].get_yticklabels()] == ["d_a", "d_b"]
    # values are written in the cells
    assert sorted(t.get_text() for t in axes[0].texts) == ["2", "4"]
    assert axes[0].get_title() == "g1: solver A\nmean synergy S over 2 runs"


def test_weights_heatmap_averages_per_group_and_solver():
    destroy, repair = weight_tables(results(RUNS))
    assert destroy.rows == ["d_a", "d_b"] and repair.rows == ["r_a", "r_b"]
    assert destroy.cols == ["g1\nsolver A", "g1\nsolver B", "g2\nsolver A"]
    assert np.array_equal(destroy.values, [[2.0, 2.0, 1.0], [np.nan, 4.0, np.nan]], equal_nan=True)
    assert np.array_equal(repair.values, [[1.0, 1.0, 1.0], [1.0, np.nan, 1.0]], equal_nan=True)
    fig = weights_figure(results(RUNS), solver="a")
    axes = [ax for ax in fig.axes if ax.images]
    assert np.array_equal(image(axes[0]), [[2.0, 1.0]])


def test_heatmaps_need_operator_statistics():
    with pytest.raises(ValueError, match=r"no run in the selection records operator statistics \(solvers: gls\)"):
        weights_figure(results(RUNS), solver="gls")
    with pytest.raises(ValueError, match="a cycle can only be chosen for an evolution run directory"):
        synergy_figure(results(RUNS), cycle=1)


def test_heatmaps_from_a_result():
    res = glns.solve(make_problem("cvrp", 12, 4, 20), iterations=30, seed=3)
    destroy, repair = weight_tables(res)
    assert destroy.rows == [s.name for s in res.destroy_stats]
    assert destroy.values[:, 0].tolist() == [s.weight for s in res.destroy_stats]
    assert repair.values[:, 0].tolist() == [s.weight for s in res.repair_stats]
    fig = synergy_figure(res)
    assert np.array_equal(image(fig.axes[0]), res.synergy)


@pytest.fixture(scope="module")
def evolution_run(tmp_path_factory):
    """A tiny real evolution run (offline LLM): 2 cycles of 1 episode, populations of 3."""
    from glns.evolution import Evolution, EvolutionConfig
    from glns.llm import LLMConfig
    from glns.offline_llm import OfflineLLMServer
    from glns.sandbox import CheckConfig

    path = tmp_path_factory.mktemp("evo") / "run"
    cfg = EvolutionConfig(problem="cvrp", generations=2, episodes_per_cycle=1, train_count=2, train_size=12,
                          iterations=20, validation_count=2, validation_size=12, validation_iterations=20,
                          validation_pairs=1, workers=1, seed=1, population=3, prune=1,
                          check=CheckConfig(sizes=(10,), instances_per_size=1, growth_n=100,
                                            growth_timeout=2.0, call_timeout=1.0, kill_grace=0.5))
    with OfflineLLMServer(seed=11, bad_rate=0.0) as server:
        llm = LLMConfig(base_url=server.base_url, model="offline", max_retries=2, backoff_base=0.01,
                        backoff_max=0.05, timeout=60)
        Evolution.start(path, cfg, llm).run()
    return path


def test_heatmaps_from_an_evolution_run(evolution_run):
    pops = [json.loads(p.read_text()) for p in sorted((evolution_run / "populations").glob("cycle_*.json"))]
    assert len(pops) == 2
    destroy, repair = weight_tables(evolution_run)
    assert destroy.cols == ["1", "2"]
    for heat, kind in ((destroy, "destroy"), (repair, "repair")):
        for j, pop in enumerate(pops):
            members = [m["id"] for m in pop[kind]]
            for i, member in enumerate(heat.rows):
                expected = pop["scores"]["fitness"][member] if member in members else np.nan
                assert heat.values[i, j] == pytest.approx(expected, nan_ok=True)
        # every member that was in a population has a row; pruned ones are blank afterwards
        assert set(heat.rows) == {m["id"] for p in pops for m in p[kind]}
        assert np.isnan(heat.values).any()
    (last,) = synergy_tables(evolution_run)
    d_ids, r_ids = [m["id"] for m in pops[-1]["destroy"]], [m["id"] for m in pops[-1]["repair"]]
    assert last.rows == d_ids and last.cols == r_ids
    syn = pops[-1]["scores"]["synergy"]
    assert last.values.tolist() == [[syn.get(f"{d}|{r}", 0.0) for r in r_ids] for d in d_ids]
    (first,) = synergy_tables(evolution_run, cycle=1)
    assert first.title == "synergy S, cycle 1"
    with pytest.raises(ValueError, match=r"no cycle 5 \(finished cycles: 1, 2\)"):
        synergy_figure(evolution_run, cycle=5)
    with pytest.raises(ValueError, match="groups and solvers apply to a bench results file"):
        weights_figure(evolution_run, group="g1")


def test_directories_that_are_not_finished_runs(tmp_path):
    with pytest.raises(ValueError, match="is not a glns evolution run directory"):
        weights_figure(tmp_path)
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(ValueError, match="the run has no finished cycle yet"):
        synergy_figure(tmp_path)


# ---------------------------------------------------------------------------- files and CLI
@pytest.mark.parametrize("suffix, magic", [(".png", PNG), (".svg", b"<?xml"), (".pdf", b"%PDF")])
def test_save_figure_writes_the_format_of_the_suffix(tmp_path, suffix, magic):
    path = save_figure(convergence_figure(results(RUNS), x="iteration"), tmp_path / "sub" / f"c{suffix}")
    data = path.read_bytes()
    assert data.startswith(magic) and len(data) > 2000
    if suffix == ".svg":
        assert b"<svg" in data[:2000]


def test_save_figure_rejects_an_unknown_suffix(tmp_path):
    with pytest.raises(ValueError, match=r"cannot tell the image format of .*c\.gif"):
        save_figure(convergence_figure(results(RUNS)), tmp_path / "c.gif")


@pytest.fixture
def results_file(tmp_path):
    """A results file whose runs are real solves of two paper instances, with locators."""
    runs = []
    for idx in range(2):
        locator = paper_locator("cvrp", 10, idx)
        res = glns.solve(load_instance(locator), iterations=50, seed=idx)
        rec = run_record(res, solver="a", group="cvrp10", instance=f"cvrp_test10_{idx}")
        rec["locator"] = locator
        runs.append(rec)
        runs.append({**rec, "solver": "b", "cost": rec["cost"] + 1.0})
    path = tmp_path / "results.json"
    path.write_text(json.dumps(results(runs)))
    return path


def test_cli_writes_every_kind_of_plot(results_file, evolution_run, tmp_path, capsys):
    commands = [
        ["convergence", str(results_file), "--x", "both", "--solver", "a", "b", "-o", "conv.png"],
        ["routes", str(results_file), "--instance", "cvrp_test10_1", "--solver", "b", "-o", "routes.svg"],
        ["routes", "--file", str(DATA / "cvrplib/P/P-n16-k8.vrp"), "--iterations", "30", "-o", "file.png"],
        ["weights", str(results_file), "--group", "cvrp10", "-o", "w.png"],
        ["synergy", str(results_file), "-o", "s.png"],
        ["weights", str(evolution_run), "-o", "ew.png"],
        ["synergy", str(evolution_run), "--cycle", "1", "-o", "es.pdf"],
    ]
    for command in commands:
        out = tmp_path / command[-1]
        assert cli.main(["plot", *command[:-1], str(out)]) == 0
        assert capsys.readouterr().out.strip() == f"wrote {out}"
        magic = {".png": PNG, ".svg": b"<?xml", ".pdf": b"%PDF"}[out.suffix]
        assert out.read_bytes().startswith(magic)


@pytest.mark.parametrize("args, message", [
    (["convergence", "{results}", "--group", "cvrp99"], "no group 'cvrp99' in the results (groups: cvrp10)"),
    (["convergence", "{results}", "--solver", "c"], "no solver 'c' in the results (solvers: a, b)"),
    (["convergence", "{missing}"], "no such results file: {missing}"),
    (["convergence", "{notjson}"], "{notjson} is not valid JSON: Expecting value at line 1, column 1"),
    (["convergence", "{otherjson}"], "{otherjson} is not a glns bench results file (format 'x', expected 'glns-bench/1')"),
    (["routes", "{results}", "--instance", "nope"], "no instance 'nope' in the results (instances: cvrp_test10_0, cvrp_test10_1)"),
    (["routes", "{results}", "--instance", "cvrp_test10_0"],
     "instance 'cvrp_test10_0' was solved by several solvers (a, b); choose one with --solver"),
    (["routes", "{results}"], "glns plot routes needs RESULTS.json --instance NAME, or --file INSTANCE"),
    (["routes", "--file", str(DATA / "cvrplib/E/E-n13-k4.vrp"), "--iterations", "5"],
     "drawing routes needs node coordinates; this instance has only a distance matrix"),
    (["weights", "{dir}"], "{dir} is not a glns evolution run directory (no config.json)"),
    (["synergy", "{results}", "--cycle", "2"], "a cycle can only be chosen for an evolution run directory"),
])
def test_cli_errors(results_file, tmp_path, capsys, args, message):
    names = {"results": results_file, "missing": tmp_path / "missing.json", "notjson": tmp_path / "bad.json",
             "otherjson": tmp_path / "other.json", "dir": tmp_path / "empty"}
    names["notjson"].write_text("not json")
    names["otherjson"].write_text('{"format": "x"}')
    names["dir"].mkdir()
    argv = [a.format(**names) for a in args]
    assert cli.main(["plot", *argv, "-o", str(tmp_path / "x.png")]) == 2
    assert capsys.readouterr().err.strip() == f"glns: error: {message.format(**names)}"
    assert not (tmp_path / "x.png").exists()


def test_without_matplotlib_the_error_names_the_extra(monkeypatch, tmp_path, capsys):
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ImportError, match=r"pip install 'glns\[plot\]'"):
        convergence_figure(results(RUNS))
    with pytest.raises(ImportError, match=r"pip install 'glns\[plot\]'"):
        route_figure(make_problem("tsp", 4, 0, 0), [0, 1, 2, 3])
    path = tmp_path / "results.json"
    path.write_text(json.dumps(results(RUNS)))
    assert cli.main(["plot", "synergy", str(path), "-o", str(tmp_path / "s.png")]) == 2
    assert "pip install 'glns[plot]'" in capsys.readouterr().err
