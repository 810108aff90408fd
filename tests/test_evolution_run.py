"""End-to-end evolution runs against the offline test LLM: full cycles on CVRP and TSP, every
action type, rejections for the right reasons, SIGKILL and exact resume, LLM failures."""

from __future__ import annotations

import json

import pytest

import glns
from glns.evolution import Evolution, EvolutionAborted, EvolutionConfig, load_module
from glns.evolution.rundir import RunDirectoryError, read_events
from glns.offline_llm import OfflineLLMServer
from offline_runs import checkpoint_outcome, offline_llm, small_evolution_config, start_and_kill



def small_config(problem: str, seed: int = 0, **changes) -> EvolutionConfig:
    """The paper's loop at a size CI can afford: 4 cycles of 2 episodes on 4 instances."""
    return small_evolution_config(problem=problem, seed=seed, **changes)


@pytest.fixture(scope="module")
def server():
    with OfflineLLMServer(seed=11, bad_rate=0.25) as srv:
        yield srv


llm_config = offline_llm


def _comparable(events: list[dict]) -> list[tuple]:
    """What must agree between runs: which events with what operator data. Sorted, because
    the events of concurrent LLM requests are logged in the order their answers arrive."""
    keys = ("event", "cycle", "episode", "id", "kind", "action", "parents", "attempt", "check",
            "code", "seed", "answer", "fitness", "score", "destroy", "repair", "dropped", "kept",
            "request", "model")
    return sorted(tuple(json.dumps(e.get(k), sort_keys=True) for k in keys)
                  for e in events if e["event"] not in ("resumed", "run_started"))


_state = checkpoint_outcome


@pytest.mark.parametrize("problem", ["cvrp", "tsp"])
def test_full_cycles_exercise_every_action(problem, server, tmp_path):
    # seed 0 draws every action in 3 refills on both problems (the draws depend on the prompt
    # texts and the refill rules, through the offline LLM's answers)
    cfg = small_config(problem, seed=0)
    lines = []
    result = Evolution.start(tmp_path / "run", cfg, llm_config(server), progress=lines.append).run()

    events = read_events(tmp_path / "run" / "events.jsonl")
    admitted = [e for e in events if e["event"] == "admitted"]
    assert {e["action"] for e in admitted} == {"seed", "i1", "i2", "m1", "m2", "c1", "c2"}
    assert len(result.history) == cfg.cycles == 4 and result.history[-1]["episodes"] == 8
    # bad answers were served and each was stopped with its reason
    rejected = [e for e in events if e["event"] == "rejected"]
    assert rejected and all(e["check"] and e["error"] for e in rejected)
    # each population is full after every refill (or reported short: a slot's 3 requests all
    # failed), pruned by fitness, and F / S reset per cycle
    short = {(e["cycle"], e["kind"]) for e in events if e["event"] == "population_short"}
    for h in result.history:
        for kind in ("destroy", "repair"):
            assert len(h[kind]) == cfg.population or (h["cycle"], kind) in short
            assert len(h[kind]) >= cfg.population - cfg.prune
    episodes = [e for e in events if e["event"] == "episode"]
    for h in result.history:
        summed: dict[str, float] = {}
        for e in episodes:
            if e["cycle"] == h["cycle"]:
                for k, v in e["fitness"].items():
                    summed[k] = summed.get(k, 0.0) + v
        assert summed.keys() == h["fitness"].keys()
        assert all(abs(summed[k] - h["fitness"][k]) < 1e-9 for k in summed)
    pruned = [e for e in events if e["event"] == "pruned"]
    assert len(pruned) == 2 * (cfg.cycles - 1)
    for e in pruned:
        assert len(e["dropped"]) == cfg.prune
        assert max(e["fitness"][i] for i in e["dropped"]) <= min(e["fitness"][i] for i in e["kept"])
    # lineage: every evolved operator names parents that were in the population
    for e in admitted:
        assert len(e["parents"]) == {"seed": 0, "i1": 0, "i2": 0, "m1": 1, "m2": 1, "c1": 2, "c2": 2}[e["action"]]
    # every episode logs how each operator ran (native, or its data view / compiled form)
    forms_seen = {f for e in episodes for f in e["forms"].values()}
    assert forms_seen and forms_seen <= {"native", "numpy", "python", "compiled+numpy", "compiled+python"}
    assert all(set(e["forms"]) == set(e["calls"]) for e in episodes)
    # the best pair is validated, exported, and glns.solve runs the module directly
    assert result.best_destroy is not None and result.best_score < float("inf")
    module = load_module(result.module_path)
    assert set(module.META["operator_forms"]) == {m.id for m in result.destroy + result.repair}
    inst = glns.datasets.generate_cvrp(20, 99) if problem == "cvrp" else glns.datasets.generate_tsp(20, 99)
    res = glns.solve(inst, module, iterations=50, seed=1)
    assert [s.name for s in res.destroy_stats] == [result.best_destroy.id]
    assert all(s.failures == 0 for s in res.destroy_stats + res.repair_stats)
    assert (tmp_path / "run" / "summary.txt").read_text().strip()
    assert any("episode 8/8" in line for line in lines)


def test_sigkill_mid_cycle_then_resume_gives_the_uninterrupted_result(server, tmp_path):
    cfg = small_config("cvrp", seed=5)
    reference = Evolution.start(tmp_path / "ref", cfg, llm_config(server)).run()

    run_dir = tmp_path / "killed"
    # kill inside cycle 2, once it has admitted an operator (mid-refill)
    killed = start_and_kill(run_dir, server.base_url, cfg, lambda events: any(
        e["event"] == "admitted" and e.get("cycle") == 2 for e in events))
    assert killed, "the run ended before it could be killed mid-cycle"
    assert _state(run_dir)["cycle"] == 1
    with pytest.raises(RunDirectoryError, match="already holds a run"):
        Evolution.start(run_dir, cfg, llm_config(server))

    resumed = Evolution.resume(run_dir, llm_config(server)).run()
    assert _state(run_dir) == _state(tmp_path / "ref")
    assert resumed.best_score == reference.best_score
    assert [m.source for m in resumed.destroy] == [m.source for m in reference.destroy]
    assert _comparable(read_events(run_dir / "events.jsonl")) == \
        _comparable(read_events(tmp_path / "ref" / "events.jsonl"))
    abandoned = read_events(run_dir / "events.abandoned.jsonl")
    assert any(e["event"] == "admitted" and e["cycle"] == 2 for e in abandoned)
    assert sum(e["event"] == "resumed" for e in read_events(run_dir / "events.jsonl")) == 1


def test_a_run_directory_is_locked_while_in_use(server, tmp_path):
    evo = Evolution.start(tmp_path / "run", small_config("tsp"), llm_config(server))
    try:
        with pytest.raises(RunDirectoryError, match="in use"):
            Evolution.resume(tmp_path / "run", llm_config(server))
    finally:
        evo.rundir.close()
    with pytest.raises(RunDirectoryError, match="not a glns evolution run"):
        Evolution.resume(tmp_path / "nothing", llm_config(server))


@pytest.mark.parametrize("concurrency", [1, 4])
def test_llm_failures_abort_cleanly_and_the_run_resumes(server, tmp_path, concurrency):
    cfg = small_config("tsp", seed=2, generations=4, llm_concurrency=concurrency)
    # HTTP 400 is not retried: every request fails, three in a row abort the run
    evo = Evolution.start(tmp_path / "run", cfg, llm_config(server, "offline:fail=400x1000"))
    with pytest.raises(EvolutionAborted, match="failed [3-6] times in a row.*--resume"):
        evo.run()
    events = read_events(tmp_path / "run" / "events.jsonl")
    failed = [e["ok"] for e in events if e["event"] == "llm_call"]
    # the calls already in flight when the third failure stops the round still end (and fail)
    assert failed == [False] * len(failed) and 3 <= len(failed) <= 3 + concurrency - 1
    assert "HTTP 400" in events[-1]["error"] if events[-1]["event"] == "llm_call" else True
    # a transient outage (two 503s) is absorbed by the client's retries
    # (the server counts the 503s per model name: one name per parameter)
    model = f"offline:fail=503x2,rate={0.25 + concurrency / 1000}"
    result = Evolution.resume(tmp_path / "run", llm_config(server, model)).run()
    assert len(result.history) == 2
    calls = [e for e in read_events(tmp_path / "run" / "events.jsonl") if e["event"] == "llm_call"]
    # the two 503s were retried (by whichever requests got them) and every call succeeded
    assert all(c["ok"] for c in calls)
    assert sum(c["record"]["attempts"] - 1 for c in calls) == 2


def test_ablation_no_joint_crossover_and_adaptive_switch(server, tmp_path):
    cfg = small_config("cvrp", seed=4, generations=6, no_joint=True, adaptive=False, sigma="flat")
    result = Evolution.start(tmp_path / "run", cfg, llm_config(server)).run()
    events = read_events(tmp_path / "run" / "events.jsonl")
    strategies = {e["strategy"] for e in events if e["event"] == "strategy"}
    assert strategies and "joint" not in strategies
    assert "c2" not in {e["action"] for e in events if e["event"] == "admitted"}
    assert json.loads((tmp_path / "run" / "config.json").read_text())["evolution"]["sigma"] == "flat"
    assert len(result.history) == 3


def test_ray_backend_gives_the_process_backend_result(server, tmp_path):
    pytest.importorskip("ray")
    import ray

    cfg = small_config("tsp", seed=2, generations=4)
    Evolution.start(tmp_path / "process", cfg, llm_config(server)).run()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        import dataclasses

        Evolution.start(tmp_path / "ray", dataclasses.replace(cfg, backend="ray"), llm_config(server)).run()
    finally:
        ray.shutdown()
    assert _state(tmp_path / "ray") == _state(tmp_path / "process")
    with pytest.raises(ValueError, match="serial backend would run untrusted code"):
        dataclasses.replace(cfg, backend="serial")
