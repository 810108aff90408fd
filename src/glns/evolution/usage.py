"""What a run has spent and produced: LLM calls, tokens, money, admissions, in total and per
action type (i1 ... c2) and per model. Kept in the checkpoint; updated from several request
threads at once, hence the lock."""

from __future__ import annotations

import copy
import threading
from dataclasses import dataclass, field, fields
from typing import Any, Mapping

__all__ = ["Counters", "TALLY_KEYS"]

#: the figures kept per action type and per model
TALLY_KEYS = ("calls", "failures", "prompt_tokens", "completion_tokens", "cost", "admitted",
              "rejected", "duplicates")

_LOCK = threading.Lock()


def _add_money(total: float, amount: float) -> float:
    """total + amount on a grid of 1e-9 USD: sums of calls that end in any order are equal
    (plain float sums are not, and the checkpoint must not depend on arrival order)."""
    return round(total + round(amount, 9), 9)


def _bump(table: dict[str, dict[str, float]], key: str, **amounts: float) -> None:
    row = table.setdefault(key, {k: 0 for k in TALLY_KEYS})
    for name, amount in amounts.items():
        row[name] = _add_money(row.get(name, 0), amount) if name == "cost" else row.get(name, 0) + amount


@dataclass
class Counters:
    """Totals over a run (cumulative; a cycle's share is the difference of two snapshots).

    cost is in USD, from the models' prices (0 when no price is configured);
    llm_seconds adds up the latency of every call, so with several requests in flight it
    exceeds the wall time spent waiting. duplicates: answers rejected as a copy (also
    renamed or reformatted) of an operator in the population or brought by an earlier slot of
    the same refill.
    """

    llm_calls: int = 0
    llm_failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    admitted: int = 0
    rejected: int = 0
    duplicates: int = 0
    cost: float = 0.0
    llm_seconds: float = 0.0
    by_action: dict[str, dict[str, float]] = field(default_factory=dict)
    by_model: dict[str, dict[str, float]] = field(default_factory=dict)

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def record_call(self, action: str, model: str, *, ok: bool, prompt_tokens: int = 0,
                    completion_tokens: int = 0, cost: float = 0.0, seconds: float = 0.0) -> None:
        """One LLM call (after the client's retries) and what it used."""
        with _LOCK:
            self.llm_calls += 1
            self.llm_failures += 0 if ok else 1
            self.prompt_tokens += prompt_tokens
            self.completion_tokens += completion_tokens
            self.cost = _add_money(self.cost, cost)
            self.llm_seconds += seconds
            for table, key in ((self.by_action, action), (self.by_model, model)):
                _bump(table, key, calls=1, failures=0 if ok else 1, prompt_tokens=prompt_tokens,
                      completion_tokens=completion_tokens, cost=cost)

    def record_verdict(self, action: str, model: str | None, *, admitted: bool,
                       duplicate: bool = False) -> None:
        """One operator admitted to a population, or one answer rejected."""
        with _LOCK:
            if admitted:
                self.admitted += 1
            else:
                self.rejected += 1
                self.duplicates += 1 if duplicate else 0
            name = "admitted" if admitted else "rejected"
            extra = {"duplicates": 1} if duplicate else {}
            _bump(self.by_action, action, **{name: 1}, **extra)
            if model is not None:
                _bump(self.by_model, model, **{name: 1}, **extra)

    def to_dict(self) -> dict[str, Any]:
        """A deep copy for JSON (the checkpoint, the history, the result)."""
        with _LOCK:
            return {f.name: copy.deepcopy(getattr(self, f.name)) for f in fields(self)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Counters":
        """Counters from :meth:`to_dict` (fields missing in older checkpoints start at zero)."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: copy.deepcopy(v) for k, v in d.items() if k in known})
