"""G-LNS on the VRPTW, offline: the prompts state the time-window rules, the offline LLM answers
with operators that keep them, and a short evolution admits, evolves, validates and exports a
pair that glns.solve runs on a new VRPTW instance."""

from __future__ import annotations

import pytest

import glns
from glns import datasets
from glns.evolution import Evolution, load_module
from glns.evolution.prompts import init_prompt
from glns.evolution.rundir import read_events
from glns.llm import markers
from glns.offline_llm import OfflineLLMServer
from offline_runs import offline_llm, small_evolution_config


def test_prompts_carry_the_rules_and_the_marker():
    text = init_prompt("vrptw", "repair", [])
    assert "Problem: VRPTW" in text and "time_windows" in text and "due" in text
    assert markers.detect(text) == ("vrptw", "repair")
    assert markers.detect("insert customers, respecting their time windows; a repair") [0] == "vrptw"


def test_a_short_vrptw_evolution_runs_offline(tmp_path):
    cfg = small_evolution_config(problem="vrptw", generations=4, seed=3)
    with OfflineLLMServer(seed=5, bad_rate=0.25) as server:
        result = Evolution.start(tmp_path / "run", cfg, offline_llm(server)).run()
    events = read_events(tmp_path / "run" / "events.jsonl")
    admitted = [e for e in events if e["event"] == "admitted"]
    assert {e["action"] for e in admitted} >= {"seed", "i1"}
    assert all(e["event"] != "episode" or e["fitness"] for e in events)
    assert result.best_destroy is not None
    module = load_module(result.module_path)
    assert module.PROBLEM == "vrptw"
    inst = datasets.generate("vrptw", 25, 77)
    res = glns.solve(inst, module, iterations=40, seed=1)
    assert inst.violation(res.solution) is None
    assert all(s.failures == 0 for s in res.destroy_stats + res.repair_stats)
