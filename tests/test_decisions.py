"""Form decisions made once: kept on disk, carried by tasks, adopted by workers that then
negotiate nothing (glns.operators.decisions)."""

from __future__ import annotations

import json
import os

import pytest

import glns
from glns.offline_llm import paper_style
from glns.operators import accelerate, decisions, from_source
from glns.sandbox import PythonSource, WorkerPool, evaluate
from glns.sandbox.evaluation import solve_task, solve_tasks, operator_wires
from tests.conftest import make_vrp

ADOPTED = "decided earlier, adopted without probes"
#: tuple views only (no compiler needed): a negotiation between the numpy and python views
VIEWS_ONLY = dict(compile="off")


def _family(n: int = 2):
    """Paper-style sources of this module's own (no other test has decided on them)."""
    family = paper_style.SOURCES["vrp"]
    mark = "\n# tests/test_decisions.py\n"
    return [s + mark for s in family["destroy"][:n]], [s + mark for s in family["repair"][:n]]


def _ops(n: int = 2):
    d, r = _family(n)
    return [from_source(s, "destroy") for s in d], [from_source(s, "repair") for s in r]


def _reasons(res: glns.Result) -> list[str]:
    return [s.form_reason for s in res.destroy_stats + res.repair_stats]


def _forget_in_process(monkeypatch) -> None:
    """As a new process: no decision in memory (the disk keeps its own)."""
    monkeypatch.setattr(accelerate, "_DECISIONS", {})
    monkeypatch.setattr(decisions, "_OFFERED", {})


def test_store_round_trip_and_bad_files(tmp_path, monkeypatch):
    monkeypatch.setenv(decisions.ENV_DIR, str(tmp_path / "d"))
    op = decisions.operator_id("def f(): pass\n")
    ctx = decisions.context_key("f", "repair", "cvrp", "data", "auto", True, "")
    assert decisions.lookup(op, ctx) is None
    assert decisions.save({op: {ctx: ("python", "faster")}})
    monkeypatch.setattr(decisions, "_OFFERED", {})
    assert decisions.lookup(op, ctx) == ("python", "faster")
    # a form that is not one of ours, or a malformed entry, is ignored
    path = tmp_path / "d" / f"{op}.json"
    path.write_text(json.dumps({ctx: ["rm -rf", "x"], "other": "nonsense"}))
    monkeypatch.setattr(decisions, "_OFFERED", {})
    assert decisions.lookup(op, ctx) is None
    path.write_text("{not json")
    assert decisions.lookup(op, ctx) is None
    # ids that are not plain hashes never become file names
    assert decisions.save({"../escape": {ctx: ("python", "x")}})
    assert not (tmp_path / "escape.json").exists()
    # another source or another glns/NumPy version is another operator
    assert decisions.operator_id("def f(): pass\n") != decisions.operator_id("def f():  pass\n")


def test_a_process_that_cannot_write_reports_its_decisions(tmp_path, monkeypatch):
    blocked = tmp_path / "file"
    blocked.write_text("")
    monkeypatch.setenv(decisions.ENV_DIR, str(blocked / "sub"))   # (a file is in the way)
    decisions.remember("abc123", "ctx", "python", "why")
    assert decisions.drain_new() == {"abc123": {"ctx": ("python", "why")}}
    assert decisions.drain_new() == {}
    monkeypatch.setenv(decisions.ENV_DIR, str(tmp_path / "ok"))
    decisions.remember("abc123", "ctx", "python", "why")
    assert decisions.drain_new() == {}    # stored: nothing to report


def test_a_later_process_adopts_the_decision_and_negotiates_nothing(monkeypatch):
    _forget_in_process(monkeypatch)
    problem = make_vrp(glns.CVRP, 30, 3)
    params = glns.SolveParams.paper(**VIEWS_ONLY)
    d, r = _ops()
    before = accelerate.negotiations()
    first = glns.solve(problem, d, r, iterations=80, seed=5, params=params)
    assert accelerate.negotiations() - before == 4, _reasons(first)
    assert not any(ADOPTED in why for why in _reasons(first))
    _forget_in_process(monkeypatch)
    d, r = _ops()
    middle = accelerate.negotiations()
    second = glns.solve(make_vrp(glns.CVRP, 30, 4), d, r, iterations=80, seed=5, params=params)
    assert accelerate.negotiations() == middle
    assert all(ADOPTED in why for why in _reasons(second)), _reasons(second)
    assert [s.form for s in first.destroy_stats + first.repair_stats] == \
        [s.form for s in second.destroy_stats + second.repair_stats]
    # the same results as a run that negotiated (the same forms run)
    _forget_in_process(monkeypatch)
    monkeypatch.setenv(decisions.ENV_DIR, os.devnull + "/none")
    d, r = _ops()
    again = glns.solve(make_vrp(glns.CVRP, 30, 4), d, r, iterations=80, seed=5, params=params)
    assert again.cost == second.cost and again.solution == second.solution
    assert list(again.best_curve) == list(second.best_curve)


def test_a_task_carries_its_decisions_to_a_worker_with_no_store(monkeypatch, tmp_path):
    problem = make_vrp(glns.CVRP, 30, 3)
    params = glns.SolveParams.paper(**VIEWS_ONLY)
    d, r = _family()
    wires = operator_wires([PythonSource(s) for s in d], [PythonSource(s) for s in r], {"cvrp"})
    _forget_in_process(monkeypatch)
    glns.solve(problem, *_ops(), iterations=40, seed=1, params=params)   # decides and stores
    tasks = solve_tasks([problem], [1], wires, 40, params)
    carried = tasks[0][12]
    assert carried and len(carried) == 4
    # the worker: nothing in memory, nothing on disk; only what the task carries
    _forget_in_process(monkeypatch)
    monkeypatch.setenv(decisions.ENV_DIR, str(tmp_path / "empty"))
    before = accelerate.negotiations()
    res = solve_task(*tasks[0])
    assert accelerate.negotiations() == before
    assert all(ADOPTED in why for why in _reasons(res)), _reasons(res)


@pytest.mark.parametrize("sandbox", ["off", "auto"])
def test_pool_workers_negotiate_once_then_never(sandbox, monkeypatch):
    """A first evaluation's workers decide (a confined worker reports its decisions to the
    caller, which keeps them); a new pool's workers then adopt them all."""
    instances = [make_vrp(glns.OVRP, 30, s) for s in range(4)]
    d, r = _family()
    d = [PythonSource(s, name=f"d{i}") for i, s in enumerate(d)]
    r = [PythonSource(s, name=f"r{i}") for i, s in enumerate(r)]
    params = glns.SolveParams.paper(**VIEWS_ONLY)
    _forget_in_process(monkeypatch)   # (the serial check of the parent would find them)
    with WorkerPool(2, sandbox=sandbox) as pool:
        first = evaluate(instances, d, r, pool=pool, iterations=60, params=params)
    assert all(o.ok for o in first), [o.error for o in first if not o.ok]
    kept = {name[:-5] for name in os.listdir(decisions.decisions_dir())}
    assert {decisions.operator_id(op.source) for op in d + r} <= kept
    with WorkerPool(2, sandbox=sandbox) as pool:
        second = evaluate(instances, d, r, pool=pool, iterations=60, params=params)
    assert all(o.ok for o in second)
    for a, b in zip(first, second):
        assert all(ADOPTED in why for why in _reasons(b.result)), _reasons(b.result)
        assert a.result.cost == b.result.cost and a.result.solution == b.result.solution


def test_ray_actors_adopt_the_decisions_their_tasks_carry(tmp_path, monkeypatch):
    """A Ray actor (here with a decision store of its own, empty, as on another machine)
    negotiates nothing: the tasks carry the decisions the caller knows."""
    ray = pytest.importorskip("ray")
    _forget_in_process(monkeypatch)
    d, r = _family()
    params = glns.SolveParams.paper(**VIEWS_ONLY)
    instances = [make_vrp(glns.CVRP, 30, s) for s in range(2)]
    ops = ([from_source(s, "destroy") for s in d], [from_source(s, "repair") for s in r])
    glns.solve(instances[0], *ops, iterations=60, seed=1, params=params)   # decides, keeps
    elsewhere = tmp_path / "actor-store"
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {decisions.ENV_DIR: str(elsewhere)}})
    try:
        results = glns.solve_many(instances, [PythonSource(s) for s in d], [PythonSource(s) for s in r],
                                  iterations=60, params=params, backend="ray", workers=1, progress=False)
    finally:
        ray.shutdown()
    for res in results:
        assert all(ADOPTED in why for why in _reasons(res)), _reasons(res)
    assert not elsewhere.exists()    # the actor wrote nothing: it decided nothing
