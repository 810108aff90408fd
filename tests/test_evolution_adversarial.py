"""The adversarial corpus against the evolution controller: every bad answer of the offline LLM
is stopped by the pre-evaluation filter for its reason, or, if it reaches the evaluation, only
ever scores sigma4; the controller survives and its run directory stays readable."""

from __future__ import annotations

import json
import random

import pytest

from glns.evolution import Evolution, EvolutionConfig, Member
from glns.evolution.generate import Counters, Generator
from glns.evolution.prompts import init_prompt
from glns.evolution.rundir import read_events
from glns.evolution.seeds import seed_members
from glns.llm import LLMClient, LLMConfig
from glns.offline_llm import BAD_CASES, OfflineLLMServer
from glns.offline_llm.bad import bad_operator_source
from glns.sandbox import CheckConfig, WorkerPool

#: BadCase.expect -> the Admission check (or "parse") that must stop it; None: admitted
STOPPED_BY = {"parse": "parse", "compile": "syntax", "signature": "signature",
              "timeout": "timeout", "kill": "timeout", "exception": "exception",
              "invalid": "output", "memory": "memory"}
HARMLESS = {"mutates_problem_data": "mutation", "forbidden_import": "forbidden"}

CHECK = CheckConfig(sizes=(10, 20), instances_per_size=1, growth_n=100, call_timeout=1.0,
                    kill_grace=0.5)
COMBOS = [("cvrp", "destroy"), ("cvrp", "repair"), ("tsp", "destroy"), ("tsp", "repair")]


@pytest.fixture(scope="module")
def server():
    with OfflineLLMServer(seed=3) as srv:
        yield srv


@pytest.fixture(scope="module")
def pool():
    with WorkerPool(workers=2, memory_mb=1024) as p:
        yield p


def _expected(case: str) -> str | None:
    return HARMLESS[case] if case in HARMLESS else STOPPED_BY[BAD_CASES[case].expect]


def test_every_bad_answer_is_stopped_for_its_reason(server, pool):
    log: list[dict] = []
    verdicts = {}
    for problem, kind in COMBOS:
        for case, spec in BAD_CASES.items():
            if spec.vrp_only and problem == "tsp":
                continue
            client = LLMClient(LLMConfig(base_url=server.base_url, model=f"offline:bad={case}",
                                         max_retries=0, timeout=30))
            gen = Generator(client, pool, problem, CHECK, max_attempts=1, rng=random.Random(1),
                            log=lambda event, **f: log.append({"event": event, **f}),
                            counters=Counters())
            seeds = seed_members(problem)[0 if kind == "destroy" else 1]
            cand = gen.single("i1" if kind == "destroy" else "i2", kind,
                              init_prompt(problem, kind, seeds), [], 1)
            rejected = [e for e in log if e["event"] == "rejected"]
            got = None if cand is not None else rejected[-1]["check"]
            verdicts[problem, kind, case] = got
            assert got == _expected(case), (problem, kind, case, rejected[-1]["error"] if rejected else None)
            if got is not None:
                assert rejected[-1]["error"], (problem, kind, case)
            log.clear()
    # 15 cases on CVRP and 14 on TSP (no capacity there), each for destroy and repair
    assert len(verdicts) == 58
    assert all(v is not None for v in verdicts.values())   # nothing bad is admitted


def _episode_with_bad_destroy(case: str, server, tmp_path, iterations: int) -> tuple[dict, EvolutionConfig]:
    """Bypassing the filter, a bad destroy operator runs in an episode next to the seeds."""
    cfg = EvolutionConfig(problem="cvrp", generations=1, episodes_per_cycle=1, train_count=2,
                          train_size=15, iterations=iterations, workers=2, op_timeout=0.3)
    llm = LLMConfig(base_url=server.base_url, model="offline")
    evo = Evolution.start(tmp_path / "run", cfg, llm)
    d, r = seed_members("cvrp")
    bad = Member(id="d9", kind="destroy", source=bad_operator_source(case, "vrp", "destroy"),
                 function="destroy", idea=case, action="i1")
    evo.state.destroy, evo.state.repair = d + [bad], r
    try:
        with WorkerPool(workers=2, memory_mb=1024) as pool:
            evo.evaluation(pool).episode(1)
        evo._checkpoint()
    finally:
        evo.rundir.close()
    state = json.loads((tmp_path / "run" / "checkpoint.json").read_text())
    assert state["episodes"] == 1 and state["destroy"] == ["d0", "d1", "d9"]
    return [e for e in read_events(tmp_path / "run" / "events.jsonl") if e["event"] == "episode"][-1], cfg


@pytest.mark.parametrize("case", ["raises", "duplicate_nodes", "wrong_types", "ignores_capacity",
                                  "infinite_loop", "memory_hog", "mutates_problem_data"])
def test_bad_operators_that_reach_the_evaluation_only_score_sigma4(case, server, tmp_path):
    episode, cfg = _episode_with_bad_destroy(case, server, tmp_path, iterations=12)
    ok_runs = cfg.train_count - len(episode["failed_runs"])
    if case in ("mutates_problem_data",):
        # valid answers from private copies: an ordinary operator for the core
        assert episode["failures"]["d9"] == 0 and ok_runs == cfg.train_count
    else:
        # every call of the bad operator failed and scored sigma4 = 0.1, nothing else
        assert episode["failures"]["d9"] == episode["calls"]["d9"]
        assert episode["fitness"].get("d9", 0.0) == pytest.approx(0.1 * episode["calls"]["d9"])
        assert episode["errors"].get("d9") or episode["calls"]["d9"] == 0
    # the good operators were unaffected in every run that finished
    assert ok_runs >= 1 and episode["mean_cost"] is not None
    assert episode["failures"]["d0"] == 0 and episode["failures"]["r0"] == 0


def test_code_that_defeats_the_call_limit_costs_only_its_runs(server, tmp_path):
    """An endless loop that swallows the timer's exception: only killing the worker stops it.
    Its runs are lost (logged as failed runs, scoring nothing); the controller goes on."""
    episode, cfg = _episode_with_bad_destroy("swallowing_loop", server, tmp_path, iterations=2)
    assert [r["status"] for r in episode["failed_runs"]] in (["timeout"] * 2, ["timeout"])
    assert all("killed" in r["error"] for r in episode["failed_runs"])


def test_an_operator_that_cannot_load_fails_its_runs_with_the_reason(server, tmp_path):
    """(The filter never admits one; evaluate reports the run as an error naming it.)"""
    episode, cfg = _episode_with_bad_destroy("wrong_signature", server, tmp_path, iterations=5)
    assert [r["status"] for r in episode["failed_runs"]] == ["error"] * cfg.train_count
    assert all("destroy operator 2" in r["error"] and "3 positional" in r["error"]
               for r in episode["failed_runs"])


def test_a_run_that_only_gets_bad_answers_survives_with_an_intact_directory(server, tmp_path):
    cfg = EvolutionConfig(problem="cvrp", generations=4, episodes_per_cycle=2, population=3, prune=1,
                          train_count=2, train_size=15, iterations=20, validation_count=2,
                          validation_size=15, validation_iterations=30, max_attempts=1, workers=2,
                          seed=8, check=CHECK)
    llm = LLMConfig(base_url=server.base_url, model="offline:bad", max_retries=0, timeout=30)
    result = Evolution.start(tmp_path / "run", cfg, llm).run()
    run = tmp_path / "run"
    lines = (run / "events.jsonl").read_text().splitlines()
    events = [json.loads(line) for line in lines]          # every line is whole JSON
    rejected = [e for e in events if e["event"] == "rejected"]
    admitted = [e for e in events if e["event"] == "admitted"]
    assert {e["action"] for e in admitted} == {"seed"} and len(rejected) >= 6
    assert len({e["check"] for e in rejected}) >= 3        # various reasons, each reported
    assert any(e["event"] == "population_short" for e in events)
    state = json.loads((run / "checkpoint.json").read_text())
    assert state["counters"]["rejected"] == len(rejected) and state["counters"]["admitted"] == 0
    for f in (run / "populations").iterdir():
        json.loads(f.read_text())
    assert result.best_destroy is not None and result.best_destroy.action == "seed"
    assert len(result.history) == 2
