"""Concurrent LLM requests, overlapped validation, budgets, ensembles and duplicate detection
of the evolution controller, against the offline test LLM (started here).

The offline server's ``jitter`` directive delays each answer by an amount drawn from the
request's seed and a salt, so two salts make concurrent answers arrive in different orders."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from glns.evolution import Evolution, EvolutionConfig
from glns.evolution.fingerprint import code_fingerprint
from glns.evolution.generate import Counters, Generator, source_key
from glns.evolution.prompts import init_prompt
from glns.evolution.refill import Refill
from glns.evolution.rundir import read_events
from glns.llm import Ensemble, LLMClient, ModelEntry, Price
from glns.offline_llm import OfflineLLMServer
from glns.offline_llm.corpus import entry
from glns.sandbox import CheckConfig, WorkerPool
from offline_runs import checkpoint_outcome, offline_llm, small_evolution_config, start_and_kill

CHECK = CheckConfig(sizes=(10,), instances_per_size=1, growth_n=100, growth_timeout=2.0,
                    call_timeout=1.0, kill_grace=0.5)


def config(**changes) -> EvolutionConfig:
    """Three cycles of two episodes on small instances, with every refill strategy."""
    return small_evolution_config(**{
        "generations": 6, "train_count": 3, "train_size": 15, "iterations": 20,
        "validation_count": 3, "validation_size": 15, "validation_iterations": 30, "seed": 4,
        "check": CHECK, **changes})


@pytest.fixture(scope="module")
def server():
    with OfflineLLMServer(seed=21, bad_rate=0.25) as srv:
        yield srv


llm = offline_llm
outcome = checkpoint_outcome


def without_model(state: dict) -> dict:
    """The outcome without the model names (which carry the offline server's directives)."""
    for m in state["members"].values():
        m.pop("model")
    state["counters"].pop("by_model")
    for h in state["history"]:
        h.pop("by_model")
    return state


def arrival_order(run_dir: Path) -> list[tuple]:
    return [(e["cycle"], e["request"], e["attempt"]) for e in read_events(run_dir / "events.jsonl")
            if e["event"] == "llm_call"]


@pytest.fixture(scope="module")
def reference(server, tmp_path_factory):
    """The run with one request at a time (no jitter)."""
    path = tmp_path_factory.mktemp("reference") / "run"
    result = Evolution.start(path, config(llm_concurrency=1), llm(server)).run()
    return path, result


@pytest.mark.parametrize("model", ["offline:jitter=0.15~1", "offline:jitter=0.15~2"])
def test_concurrency_and_arrival_order_do_not_change_the_result(server, reference, tmp_path, model):
    ref_path, ref = reference
    path = tmp_path / "run"
    result = Evolution.start(path, config(llm_concurrency=4), llm(server, model)).run()
    got, want = outcome(path), outcome(ref_path)
    # the model name differs (it carries the jitter directive); everything else is identical
    assert without_model(got) == without_model(want)
    assert [m.source for m in result.destroy] == [m.source for m in ref.destroy]
    assert result.best_score == ref.best_score
    # and the answers did arrive out of plan order
    order = arrival_order(path)
    assert order != sorted(order)


def test_both_jitter_salts_give_different_arrival_orders(server, tmp_path):
    orders = []
    for salt in (1, 2):
        path = tmp_path / f"run{salt}"
        Evolution.start(path, config(llm_concurrency=4, generations=2),
                        llm(server, f"offline:jitter=0.15~{salt}")).run()
        orders.append(arrival_order(path))
    assert sorted(orders[0]) == sorted(orders[1]) and orders[0] != orders[1]


def test_sigkill_during_concurrent_requests_then_resume(server, reference, tmp_path):
    ref_path, _ = reference
    run_dir = tmp_path / "killed"
    model = "offline:jitter=0.4~3"
    # requests of cycle 2 have answered while others are still in flight
    killed = start_and_kill(run_dir, server.base_url, config(llm_concurrency=4), lambda events: sum(
        e["event"] == "llm_call" and e.get("cycle") == 2 for e in events) >= 2, model=model)
    assert killed, "the run ended before it could be killed mid-refill"
    Evolution.resume(run_dir, llm(server, model)).run()
    got, want = outcome(run_dir), outcome(ref_path)
    assert without_model(got) == without_model(want)
    abandoned = read_events(run_dir / "events.abandoned.jsonl")
    assert any(e["event"] == "llm_call" and e.get("cycle") == 2 for e in abandoned)


def test_token_budget_stops_at_a_cycle_boundary_and_resume_finishes_the_run(server, reference, tmp_path):
    ref_path, ref = reference
    first_cycle = ref.history[0]["tokens"]
    path = tmp_path / "run"
    result = Evolution.start(path, config(llm_concurrency=1, max_tokens=first_cycle + 1),
                             llm(server)).run()
    assert result.stopped is not None and result.stopped["budget"] == "tokens"
    assert [h["cycle"] for h in result.history] == [1]
    assert outcome(path)["history"] == outcome(ref_path)["history"][:1]
    assert "Stopped after cycle 1" in (path / "summary.txt").read_text()
    assert (path / "best_operators.py").exists()
    assert any(e["event"] == "budget_stop" for e in read_events(path / "events.jsonl"))
    # a larger budget continues exactly as the unbudgeted run
    resumed = Evolution.resume(path, llm(server), max_tokens=10 ** 9).run()
    assert resumed.stopped is None
    assert outcome(path) == outcome(ref_path)


def test_time_budget_inside_the_first_cycle_keeps_nothing_and_resume_finishes(server, reference, tmp_path):
    ref_path, _ = reference
    path = tmp_path / "run"
    # every answer takes 0.3 s: the budget is exceeded at the first answer, inside cycle 1
    slow = llm(server, "offline:slow=0.3")
    result = Evolution.start(path, config(llm_concurrency=1, max_time=0.25), slow).run()
    assert result.stopped is not None and result.stopped["budget"] == "time"
    assert result.stopped["projected"] is None   # exceeded, not foreseen
    assert result.history == [] and result.module_path is None
    Evolution.resume(path, llm(server), max_time=10 ** 6).run()
    assert without_model(outcome(path)) == without_model(outcome(ref_path))


def test_cost_budget_uses_the_prices_and_writes_them(server, tmp_path):
    price = Price(input=1.0, output=2.0)
    models = Ensemble.single(llm(server), price)
    path = tmp_path / "run"
    unbudgeted = Evolution.start(tmp_path / "free", config(llm_concurrency=4), models).run()
    c = unbudgeted.counts
    assert c["cost"] == pytest.approx(price.cost(c["prompt_tokens"], c["completion_tokens"]))
    limit = unbudgeted.history[0]["cost"] * 1.01
    stopped = Evolution.start(path, config(llm_concurrency=4, max_cost=limit), models).run()
    assert stopped.stopped["budget"] == "cost" and len(stopped.history) == 1
    prices = json.loads((path / "prices.json").read_text())
    assert prices["snapshots"][0]["models"]["offline"]["input"] == 1.0
    summary = (path / "summary.txt").read_text()
    assert "LLM usage per action type" in summary and "cost USD" in summary
    # a larger budget finishes as the run without one did
    resumed = Evolution.resume(path, models, max_cost=1e9).run()
    assert resumed.stopped is None
    assert outcome(path) == outcome(tmp_path / "free")
    with pytest.raises(ValueError, match="needs a price for every model"):
        Evolution.start(tmp_path / "unpriced", config(max_cost=1.0), llm(server))


def test_ensemble_models_are_drawn_by_weight_and_logged(server, tmp_path):
    a, b = "offline:rate=0.2", "offline:rate=0.3"
    models = Ensemble((ModelEntry(a, llm(server, a), weight=3.0), ModelEntry(b, llm(server, b), weight=1.0)))
    path = tmp_path / "run"
    result = Evolution.start(path, config(llm_concurrency=4), models).run()
    events = read_events(path / "events.jsonl")
    planned = [r["model"] for e in events if e["event"] == "round" for r in e["requests"]]
    calls = {e["model"] for e in events if e["event"] == "llm_call"}
    assert set(planned) == {a, b} == calls
    # the same draws as the run's random stream makes them: replay the plan's model choices
    assert planned.count(a) > planned.count(b)
    admitted = [e for e in events if e["event"] == "admitted" and e["action"] != "seed"]
    assert admitted and all(e["model"] in (a, b) for e in admitted)
    members = json.loads((path / "checkpoint.json").read_text())["members"]
    assert {m["model"] for m in members.values() if m["action"] != "seed"} <= {a, b}
    summary = (path / "summary.txt").read_text()
    assert "Models" in summary and a in summary and b in summary
    by_model = result.counts["by_model"]
    assert by_model[a]["calls"] + by_model[b]["calls"] == result.counts["llm_calls"]


def test_a_renamed_copy_of_a_population_member_is_rejected(server):
    """The offline LLM answers the forced entry, half the time with its function renamed:
    the exact-text key misses those, the AST fingerprint does not."""
    original = entry("vrp/shaw_removal")
    log: list[dict] = []
    with WorkerPool(workers=1, memory_mb=1024) as pool:
        gen = Generator(LLMClient(llm(server, "offline:good=vrp/shaw_removal")), pool, "cvrp",
                        CHECK, max_attempts=1, rng=random.Random(5),
                        log=lambda event, **f: log.append({"event": event, **f}),
                        counters=Counters(), key=code_fingerprint)
        gen.known_sources = {code_fingerprint(original.source())}
        prompt = init_prompt("cvrp", "destroy", [])
        results = [gen.single("i1", "destroy", prompt, [], 1) for _ in range(6)]
    assert results == [None] * 6
    rejected = [e for e in log if e["event"] == "rejected"]
    assert [e["check"] for e in rejected] == ["duplicate"] * 6
    assert gen.counters.duplicates == 6
    assert any(source_key(e["code"]) != source_key(original.source()) for e in rejected)


def test_copies_answered_within_one_round_are_admitted_once(server, tmp_path):
    """Four slots of one request each all bring the same operator (renamed or not): the first
    slot's is admitted, the other three are rejected as copies of what an earlier slot brought."""
    cfg = config(llm_concurrency=4)
    evo = Evolution.start(tmp_path / "run", cfg, llm(server, "offline:good=vrp/shaw_removal"))
    try:
        with WorkerPool(workers=1, memory_mb=1024) as pool:
            gen = Generator(evo.clients, pool, "cvrp", evo.check, 1, evo.state.rng,
                            evo.rundir.log, evo.state.counters, concurrency=4, key=code_fingerprint)
            refill = Refill(cfg, evo.state, gen, evo.rundir, evo.check, evo.build_params, lambda line: None)
            plan: list = []
            slots = [[refill._request(plan, "i1", "destroy", init_prompt("cvrp", "destroy", []), (), k)]
                     for k in range(4)]
            added = refill._execute(slots, 1)
    finally:
        evo.rundir.close()
    assert [m.id for m in added] == ["d0"]
    events = read_events(tmp_path / "run" / "events.jsonl")
    copies = [e for e in events if e["event"] == "rejected" and "same refill" in (e["error"] or "")]
    assert sorted(e["request"] for e in copies) == [1, 2, 3]
    assert evo.state.counters.duplicates == 3 and evo.state.counters.admitted == 1
