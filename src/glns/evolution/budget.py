"""Budgets of a run: LLM tokens, money and wall time (docs/evolution.md, "Budgets").

A run stops at a cycle boundary: before a cycle starts, when what has been used plus what the
most expensive cycle so far used would exceed a budget; and, should a cycle overrun anyway,
as soon as a budget is exceeded, abandoning that cycle (its work is redone on resume, exactly
as after a kill). Either way the last finished cycle is on disk and ``--resume`` with a larger
budget continues as if no budget had been set.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from glns.exceptions import GlnsError

__all__ = ["Budgets", "BudgetStop", "Usage", "usage_of", "largest_cycle"]

#: budget name -> (unit for messages, the option that sets it)
_NAMES = {"tokens": ("tokens", "--max-tokens"), "cost": ("USD", "--max-cost"),
          "time": ("s", "--max-time")}


@dataclass(frozen=True)
class Usage:
    """Tokens, money (USD) and wall seconds, used so far or by one cycle."""

    tokens: float = 0.0
    cost: float = 0.0
    time: float = 0.0

    def __add__(self, other: "Usage") -> "Usage":
        return Usage(self.tokens + other.tokens, self.cost + other.cost, self.time + other.time)

    def __sub__(self, other: "Usage") -> "Usage":
        return Usage(self.tokens - other.tokens, self.cost - other.cost, self.time - other.time)


def usage_of(record: Mapping[str, Any]) -> Usage:
    """The cumulative usage in a history record (a finished cycle)."""
    return Usage(float(record.get("tokens", 0)), float(record.get("cost", 0.0)),
                 float(record.get("seconds", 0.0)))


def largest_cycle(history: Sequence[Mapping[str, Any]]) -> Usage:
    """Per budget, the most any single finished cycle used (what the next one may use)."""
    before, most = Usage(), Usage()
    for record in history:
        now = usage_of(record)
        step = now - before
        most = Usage(max(most.tokens, step.tokens), max(most.cost, step.cost), max(most.time, step.time))
        before = now
    return most


class BudgetStop(GlnsError, RuntimeError):
    """A budget stops the run (at a cycle boundary). which: "tokens", "cost" or "time"."""

    def __init__(self, which: str, limit: float, used: float, projected: float | None = None) -> None:
        unit, option = _NAMES[which]
        self.which, self.limit, self.used, self.projected = which, limit, used, projected
        if projected is None:
            why = f"the {which} budget of {limit:g} {unit} is used up ({used:.6g} {unit})"
        else:
            why = (f"the next cycle would exceed the {which} budget of {limit:g} {unit} "
                   f"(used {used:.6g} {unit}; the largest cycle so far used {projected:.6g})")
        super().__init__(f"{why}; resume with a larger {option}")

    def to_dict(self) -> dict[str, Any]:
        return {"budget": self.which, "limit": self.limit, "used": self.used,
                "projected": self.projected, "message": str(self)}


@dataclass(frozen=True)
class Budgets:
    """Limits of a run; None means no limit. tokens: prompt plus completion tokens; cost: USD
    from the models' prices; time: wall seconds over all processes of the run."""

    tokens: int | None = None
    cost: float | None = None
    time: float | None = None

    def __post_init__(self) -> None:
        for name in ("tokens", "cost", "time"):
            value = getattr(self, name)
            if value is not None and not (isinstance(value, (int, float)) and not isinstance(value, bool)
                                          and math.isfinite(value) and value > 0):
                raise ValueError(f"the {name} budget must be a number > 0, got {value!r}")

    def limits(self) -> dict[str, float]:
        return {k: float(v) for k, v in (("tokens", self.tokens), ("cost", self.cost),
                                         ("time", self.time)) if v is not None}

    def exceeded(self, used: Usage) -> BudgetStop | None:
        """The first budget that `used` exceeds, or None."""
        for which, limit in self.limits().items():
            if getattr(used, which) > limit:
                return BudgetStop(which, limit, getattr(used, which))
        return None

    def before_cycle(self, used: Usage, largest: Usage) -> BudgetStop | None:
        """Whether to stop before the next cycle: a budget used up, or one that the next cycle
        would exceed if it used as much as the largest cycle so far."""
        for which, limit in self.limits().items():
            now, step = getattr(used, which), getattr(largest, which)
            if now >= limit:
                return BudgetStop(which, limit, now)
            if now + step > limit:
                return BudgetStop(which, limit, now, step)
        return None
