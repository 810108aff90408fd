"""Helpers shared by the tests that run evolutions against the offline test LLM."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

from glns.evolution import EvolutionConfig
from glns.evolution.rundir import read_events
from glns.llm import LLMConfig
from glns.sandbox import CheckConfig


def offline_llm(server, model: str = "offline") -> LLMConfig:
    """An endpoint on the offline server `server` with fast retries."""
    return LLMConfig(base_url=server.base_url, model=model, max_retries=2, backoff_base=0.01,
                     backoff_max=0.05, timeout=60)


def checkpoint_outcome(run_dir: Path) -> dict:
    """The final checkpoint of a run without what depends on timing (wall-clock figures, the
    event log's length) or on the session (the settings a resume may change)."""
    state = json.loads((Path(run_dir) / "checkpoint.json").read_text())
    for h in state["history"]:
        h.pop("seconds")
        h.pop("timing")
    state["counters"].pop("llm_seconds")
    for k in ("elapsed", "events_offset", "resumable", "generations"):
        state.pop(k, None)
    return state


def small_evolution_config(**changes) -> EvolutionConfig:
    """The paper's loop at a size CI can afford: 4 cycles of 2 episodes on 4 CVRP instances of
    20 nodes, two workers, every refill strategy, a quick pre-evaluation filter."""
    base = dict(problem="cvrp", generations=8, episodes_per_cycle=2, train_count=4, train_size=20,
                iterations=30, validation_count=4, validation_size=20, validation_iterations=60,
                validation_pairs=2, workers=2, seed=0,
                mix={"mutation": 0.4, "homogeneous": 0.3, "joint": 0.3},
                check=CheckConfig(sizes=(10,), instances_per_size=1, growth_n=100,
                                  growth_timeout=2.0, call_timeout=1.0, kill_grace=0.5))
    base.update(changes)
    return EvolutionConfig(**base)


SCRIPT = Path(__file__).with_name("evolve_script.py")


def start_and_kill(run_dir: Path, base_url: str, config: EvolutionConfig,
                   when: Callable[[list[dict]], bool], model: str = "offline",
                   timeout: float = 120.0) -> bool:
    """Start an evolution in its own process (tests/evolve_script.py) and SIGKILL it as soon as
    `when(events)` holds for its event log; whether it was killed before it ended."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    proc = subprocess.Popen([sys.executable, str(SCRIPT), "start", str(run_dir), base_url,
                             json.dumps(config.to_dict()), model], env=env)
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and proc.poll() is None:
            if when(read_events(Path(run_dir) / "events.jsonl")):
                proc.send_signal(signal.SIGKILL)
                proc.wait(30)
                return True
            time.sleep(0.01)
        return False
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
