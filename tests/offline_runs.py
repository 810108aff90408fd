"""Helpers shared by the tests that run evolutions against the offline test LLM."""

from __future__ import annotations

import json
from pathlib import Path

from glns.llm import LLMConfig


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
