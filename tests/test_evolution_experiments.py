"""Experiments as the paper ran them (glns.evolution.experiments): several runs with seeds s,
s+1, ..., their final test, the summaries and curves, continuing a partial experiment, the
ablation table, the plots and `glns evolve --runs N`. Tiny settings and the offline LLM (with
no deliberately bad answers: the filter is tested elsewhere)."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

import glns
from glns.evolution import Evolution, EvolutionConfig
from glns.evolution import experiment_report as report
from glns.evolution import final_testing
from glns.evolution.experiments import (ALL_VARIANTS, VARIANT_LABELS, ExperimentError, run_ablations,
                                        run_experiment, variant_config)
from glns.evolution.final_testing import FinalTestSettings, best_pair, final_test
from glns.llm import LLMConfig
from glns.offline_llm import OfflineLLMServer
from glns.rng import run_seed
from glns.sandbox import CheckConfig

TEST = FinalTestSettings(count=4, size=10, iterations=20)


def tiny_config(problem: str = "tsp", seed: int = 7, **changes) -> EvolutionConfig:
    """Two cycles of two episodes on two TSP10 instances: a run takes about a second."""
    base = dict(problem=problem, generations=4, episodes_per_cycle=2, population=3, prune=1,
                train_count=2, train_size=10, iterations=10, validation_count=2, validation_size=10,
                validation_iterations=10, workers=1, seed=seed,
                check=CheckConfig(sizes=(10,), instances_per_size=1, growth_n=100,
                                  growth_timeout=2.0, call_timeout=1.0, kill_grace=0.5))
    base.update(changes)
    return EvolutionConfig(**base)


@pytest.fixture(scope="module")
def llm():
    with OfflineLLMServer(seed=11, bad_rate=0.0) as srv:
        yield LLMConfig(base_url=srv.base_url, model="offline", max_retries=2, backoff_base=0.01,
                        backoff_max=0.05, timeout=60)


def _checkpoint(run_dir: Path) -> dict:
    return json.loads((run_dir / "checkpoint.json").read_text())


def _set_budget(run_dir: Path, generations: int) -> None:
    for name, keys in (("checkpoint.json", ("generations",)), ("config.json", ("evolution", "generations"))):
        data = json.loads((run_dir / name).read_text())
        target = data
        for k in keys[:-1]:
            target = target[k]
        target[keys[-1]] = generations
        (run_dir / name).write_text(json.dumps(data))


def test_variants_map_to_the_papers_switches():
    # a base with every switch off the full setting: each variant starts from the full G-LNS
    base = tiny_config(no_mutation=True, no_joint=True, adaptive=False, sigma="aggressive")
    switches = ("no_mutation", "no_homogeneous", "no_joint", "adaptive", "sigma")
    full = dict(no_mutation=False, no_homogeneous=False, no_joint=False, adaptive=True, sigma="paper")
    expected = {"full": {}, "no-mutation": {"no_mutation": True}, "no-homogeneous": {"no_homogeneous": True},
                "no-synergy": {"no_joint": True}, "no-adaptive": {"adaptive": False},
                "flat": {"sigma": "flat"}, "aggressive": {"sigma": "aggressive"}}
    assert ALL_VARIANTS == tuple(expected)
    assert [VARIANT_LABELS[v] for v in ALL_VARIANTS] == ["G-LNS", "w/o Mut.", "w/o Homo.", "w/o Syn.",
                                                         "w/o Adapt.", "Flat", "Aggressive"]
    for variant, changes in expected.items():
        cfg = variant_config(base, variant, "cvrp")
        assert {k: getattr(cfg, k) for k in switches} == {**full, **changes}, variant
        assert cfg.problem == "cvrp" and cfg.seed == base.seed and cfg.generations == base.generations
    assert variant_config(base, "no-synergy").effective_mix()["joint"] == 0.0
    assert variant_config(base, "no-adaptive").solve_params().adaptive is False
    with pytest.raises(ValueError, match="unknown ablation variant 'no-llm'"):
        variant_config(base, "no-llm")


def test_experiment_runs_summary_curves_and_continuing(llm, tmp_path):
    exp = tmp_path / "exp"
    cfg = tiny_config(seed=7)
    run_experiment(exp, cfg, llm, runs=2, test=TEST)
    # run-3 as a killed experiment leaves it: its checkpoint after cycle 1 of 2, no final outputs
    Evolution.start(exp / "run-3", dataclasses.replace(cfg, seed=9, generations=2), llm).run()
    _set_budget(exp / "run-3", 4)
    (exp / "run-3" / "summary.txt").unlink()
    assert report.run_state(exp / "run-3") == "unfinished"
    before = {n: (exp / n / "events.jsonl").read_bytes() for n in ("run-1", "run-2")}
    tests_before = {n: (exp / n / "final_test.json").read_bytes() for n in ("run-1", "run-2")}
    history3 = _checkpoint(exp / "run-3")["history"]

    lines: list[str] = []
    result = run_experiment(exp, cfg, llm, runs=3, test=TEST, progress=lines.append)
    # the finished runs are not redone (their logs and final tests are untouched) ...
    assert "[run-1] finished (4 episodes); skipped" in lines and "[run-2] finished (4 episodes); skipped" in lines
    for n in ("run-1", "run-2"):
        assert (exp / n / "events.jsonl").read_bytes() == before[n]
        assert (exp / n / "final_test.json").read_bytes() == tests_before[n]
    # ... and run-3 continued from its checkpoint
    assert "[run-3] resuming from its last checkpoint" in lines
    state3 = _checkpoint(exp / "run-3")
    assert state3["episodes"] == 4 and [h["cycle"] for h in state3["history"]] == [1, 2]
    assert state3["history"][0]["best"] == history3[0]["best"]

    summary = result.summary
    assert json.loads((exp / "runs_summary.json").read_text()) == json.loads(json.dumps(summary))
    runs = summary["runs"]
    assert [r["name"] for r in runs] == ["run-1", "run-2", "run-3"] and result.runs == [exp / f"run-{i}" for i in (1, 2, 3)]
    assert [r["seed"] for r in runs] == [7, 8, 9]
    for r in runs:
        run_dir = exp / r["name"]
        config = json.loads((run_dir / "config.json").read_text())["evolution"]
        state = _checkpoint(run_dir)
        tested = json.loads((run_dir / "final_test.json").read_text())["tests"][-1]
        assert config["seed"] == r["seed"] and r["state"] == "finished"
        assert r["episodes"] == state["episodes"] == 4 and r["cycles"] == state["cycle"] == 2
        assert r["best_score"] == state["best"]["score"]
        assert r["best_pair"] == f"{state['best']['destroy']}+{state['best']['repair']}"
        assert r["llm_calls"] == state["counters"]["llm_calls"] > 0
        assert r["tokens"] == state["counters"]["prompt_tokens"] + state["counters"]["completion_tokens"] > 0
        assert r["test_mean"] == tested["mean"] == pytest.approx(statistics.fmean(tested["costs"]))
        assert r["test_gap"] == tested["mean_gap"] and r["test_failed"] == 0
        assert f"{r['best_score']:.4f}" in (run_dir / "summary.txt").read_text()
    agg = summary["aggregate"]
    for key in ("best_score", "test_mean", "tokens", "llm_calls"):
        values = [r[key] for r in runs]
        assert agg[key]["mean"] == pytest.approx(statistics.fmean(values))
        assert agg[key]["sd"] == pytest.approx(statistics.stdev(values))
        assert (agg[key]["min"], agg[key]["max"], agg[key]["n"]) == (min(values), max(values), 3)

    curve = summary["curve"]
    assert curve["episodes"] == [2, 4]
    for r in runs:
        values = curve["runs"][r["name"]]
        assert len(values) == 2 and None not in values
        assert all(b <= a for a, b in zip(values, values[1:])), "best-so-far must not increase"
        assert values[-1] == r["best_score"]
        assert values == [h["best"]["score"] for h in _checkpoint(exp / r["name"])["history"]]
    for i in range(2):
        column = [curve["runs"][n][i] for n in ("run-1", "run-2", "run-3")]
        assert curve["mean"][i] == pytest.approx(statistics.fmean(column))
        assert curve["sd"][i] == pytest.approx(statistics.stdev(column))
        assert (curve["min"][i], curve["max"][i], curve["n"][i]) == (min(column), max(column), 3)
    text = (exp / "runs_summary.txt").read_text()
    assert "seeds 7, 8, 9" in text and "mean ± sd" in text and f"{agg['test_mean']['mean']:.4f}" in text
    saved = json.loads((exp / "experiment.json").read_text())
    assert saved["runs"] == 3 and saved["seeds"] == [7, 8, 9]
    assert [r["state"] for r in saved["run_states"]] == ["finished"] * 3

    # the final test is what glns.solve gives for the best pair with the test seeds and the
    # run's solver settings
    d, r = best_pair(exp / "run-1")
    first = glns.datasets.paper_instances("tsp", 10)[0]
    direct = glns.solve(first, d.spec(), r.spec(), iterations=20, seed=run_seed(0, "test", 0),
                        params=cfg.solve_params())
    assert json.loads((exp / "run-1" / "final_test.json").read_text())["tests"][-1]["costs"][0] \
        == pytest.approx(direct.cost)

    # continuing with other settings is refused; fewer runs too
    with pytest.raises(ExperimentError, match="iterations: 10 there, 20 now"):
        run_experiment(exp, dataclasses.replace(cfg, iterations=20), llm, test=TEST)
    with pytest.raises(ExperimentError, match="would drop some"):
        run_experiment(exp, cfg, llm, runs=2, test=TEST)


def test_final_test_is_cached(llm, tmp_path, monkeypatch):
    run_dir = tmp_path / "run"
    Evolution.start(run_dir, tiny_config(seed=3, generations=2), llm).run()
    record = final_test(run_dir, TEST)
    assert len(record["costs"]) == 4 and record["settings"] == {
        "problem": "tsp", "size": 10, "count": 4, "iterations": 20, "seed": 0}
    refs = glns.datasets.reference_objectives("tsp", 10)[:4]
    assert record["mean_gap"] == pytest.approx(statistics.fmean(
        100 * (c / ref - 1) for c, ref in zip(record["costs"], refs)))

    def no_runs(*args, **kwargs):
        raise AssertionError("the cached final test was computed again")

    monkeypatch.setattr(final_testing, "evaluate", no_runs)
    assert final_test(run_dir, TEST) == record
    with pytest.raises(AssertionError, match="computed again"):   # other settings: a new test
        final_test(run_dir, dataclasses.replace(TEST, iterations=30))
    with pytest.raises(ValueError, match="no size 30"):
        final_test(run_dir, FinalTestSettings(size=30))
    with pytest.raises(ValueError, match="has 64 instances, not 65"):
        final_test(run_dir, FinalTestSettings(count=65))


def test_ablations_table_has_every_variant_and_problem(llm, tmp_path):
    study = tmp_path / "ablations"
    result = run_ablations(study, tiny_config(seed=2), llm, runs=1, test=TEST)
    table = json.loads((study / "ablation_table.json").read_text())
    assert table == json.loads(json.dumps(result.table))
    assert table["variants"] == list(ALL_VARIANTS) and table["problems"] == ["tsp", "cvrp"]
    for v in ALL_VARIANTS:
        for p in ("tsp", "cvrp"):
            exp = study / f"{v}-{p}"
            run_cfg = json.loads((exp / "run-1" / "config.json").read_text())["evolution"]
            assert run_cfg["problem"] == p and run_cfg["seed"] == 2
            assert {k: run_cfg[k] for k in VARIANT_SWITCHES[v]} == VARIANT_SWITCHES[v]
            cell = table["cells"][v][p]
            summary = json.loads((exp / "runs_summary.json").read_text())
            assert cell["mean"] == summary["runs"][0]["test_mean"] is not None
            assert cell["gap"] == summary["runs"][0]["test_gap"] and cell["tested"] == cell["runs"] == 1
            full = table["cells"]["full"][p]["mean"]
            assert cell["vs_full"] == pytest.approx(100 * (cell["mean"] / full - 1))
    text = (study / "ablation_table.txt").read_text()
    md = (study / "ablation_table.md").read_text().splitlines()
    assert "TSP10 obj." in text and "CVRP10 obj." in text
    assert len(md) == 2 + len(ALL_VARIANTS)
    for label in VARIANT_LABELS.values():
        assert sum(line.startswith(f"| {label} |") for line in md) == 1

    pytest.importorskip("matplotlib")
    from glns.plot.runs import plot_runs

    png = plot_runs(study, tmp_path / "ablation.png", band="sd")
    assert png.stat().st_size > 5000


#: what each variant's runs must have in their config.json
VARIANT_SWITCHES = {
    "full": {"no_mutation": False, "no_homogeneous": False, "no_joint": False, "adaptive": True, "sigma": "paper"},
    "no-mutation": {"no_mutation": True}, "no-homogeneous": {"no_homogeneous": True},
    "no-synergy": {"no_joint": True}, "no-adaptive": {"adaptive": False},
    "flat": {"sigma": "flat"}, "aggressive": {"sigma": "aggressive"},
}


def _glns(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GLNS_LLM", "OPENAI"))}
    return subprocess.run([sys.executable, "-m", "glns", *args], capture_output=True, text=True,
                          timeout=300, env=env)


TINY = ["--problem", "tsp", "--generations", "4", "--episodes-per-cycle", "2", "--population", "3",
        "--prune", "1", "--train-count", "2", "--train-size", "10", "--iterations", "10",
        "--validation-count", "2", "--validation-size", "10", "--validation-iterations", "10",
        "--workers", "1", "--offline-bad-rate", "0", "--test-count", "4", "--test-iterations", "20"]


def test_cli_runs_resume_and_plot(tmp_path):
    exp = tmp_path / "exp"
    out = _glns("evolve", "--offline", "--runs", "3", "--seed", "4", "--run-dir", str(exp), "-q", *TINY)
    assert out.returncode == 0, out.stderr
    assert [json.loads((exp / f"run-{i}" / "config.json").read_text())["evolution"]["seed"]
            for i in (1, 2, 3)] == [4, 5, 6]
    assert "[run-3] final test of" in out.stderr and " episode " not in out.stderr   # -q
    assert out.stdout == (exp / "runs_summary.txt").read_text() and "seeds 4, 5, 6" in out.stdout
    if importlib.util.find_spec("matplotlib") is not None:
        assert (exp / "runs.png").stat().st_size > 5000
    else:
        assert "pip install 'glns[plot]'" in out.stderr

    again = _glns("evolve", "--resume", str(exp), "-q")          # finished: nothing is redone
    assert again.returncode == 0, again.stderr
    assert again.stderr.count("finished (4 episodes); skipped") == 3 and "cycle" not in again.stderr

    one = _glns("evolve", "--resume", str(exp / "run-2"), "--generations", "6", "-q")   # an ordinary run
    assert one.returncode == 0 and _checkpoint(exp / "run-2")["episodes"] == 6

    bad = _glns("evolve", "--offline", "--ablations", "--sigma", "flat", "--run-dir", str(tmp_path / "a"))
    assert bad.returncode == 2 and "--ablations sets the ablation switches itself" in bad.stderr

    pytest.importorskip("matplotlib")
    plot = _glns("plot", "runs", str(exp), "-o", str(tmp_path / "runs.svg"))
    assert plot.returncode == 0, plot.stderr
    assert "<svg" in (tmp_path / "runs.svg").read_text()
