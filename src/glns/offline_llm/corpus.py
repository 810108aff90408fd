"""The offline LLM's good answers: every operator of :mod:`.corpus_tsp`, :mod:`.corpus_vrp` and
:mod:`.corpus_vrptw`.

An entry's answer code is its module's imports plus the function's source; its idea is the
first line of its docstring. TSP prompts get TSP operators; CVRP and OVRP prompts share the
VRP operators, which honour ``problem_data["open_routes"]``; VRPTW prompts get operators
that keep the time windows.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass
from typing import Callable

from glns.offline_llm import corpus_tsp, corpus_vrp, corpus_vrptw

__all__ = ["CorpusEntry", "GOOD", "HEADER", "family_of", "good_entries", "entry"]

#: imports every corpus answer starts with
HEADER = "import math\nimport random\n\nimport numpy as np\n"


@dataclass(frozen=True)
class CorpusEntry:
    """One good operator: name 'family/function', family 'tsp', 'vrp' or 'vrptw', kind, the function."""

    name: str
    family: str
    kind: str
    func: Callable

    @property
    def idea(self) -> str:
        return inspect.getdoc(self.func).splitlines()[0]

    def function_source(self, function_name: str | None = None) -> str:
        """The function's source, renamed to function_name if given."""
        body = inspect.getsource(self.func)
        if function_name is not None:
            body = re.sub(rf"^def {self.func.__name__}\(", f"def {function_name}(", body, count=1)
        return body

    def source(self, function_name: str | None = None) -> str:
        """Answer code: the imports, then the function (see function_source)."""
        return f"{HEADER}\n\n{self.function_source(function_name)}"


def _entries(module, family: str) -> dict[str, tuple[CorpusEntry, ...]]:
    return {kind: tuple(CorpusEntry(f"{family}/{f.__name__}", family, kind, f) for f in funcs)
            for kind, funcs in (("destroy", module.DESTROY), ("repair", module.REPAIR))}


#: (family, kind) -> entries
GOOD: dict[tuple[str, str], tuple[CorpusEntry, ...]] = {
    (family, kind): entries
    for family, module in (("tsp", corpus_tsp), ("vrp", corpus_vrp), ("vrptw", corpus_vrptw))
    for kind, entries in _entries(module, family).items()
}


def family_of(problem: str) -> str:
    """'tsp' for TSP, 'vrp' for CVRP and OVRP, 'vrptw' for VRPTW."""
    problem = problem.lower()
    if problem not in ("tsp", "cvrp", "ovrp", "vrptw"):
        raise ValueError(f"problem must be tsp, cvrp, ovrp or vrptw, got {problem!r}")
    return {"tsp": "tsp", "vrptw": "vrptw"}.get(problem, "vrp")


def good_entries(problem: str, kind: str) -> tuple[CorpusEntry, ...]:
    """The good operators for a problem ('tsp'/'cvrp'/'ovrp'/'vrptw') and kind ('destroy'/'repair')."""
    family = family_of(problem)
    if family == "vrptw" and kind == "destroy":     # removals keep the windows: VRP ones too
        return GOOD[(family, kind)] + GOOD[("vrp", kind)]
    return GOOD[(family, kind)]


def entry(name: str) -> CorpusEntry:
    """An entry by name ('tsp/segment_removal'), or by function name if unambiguous."""
    matches = [e for entries in GOOD.values() for e in entries
               if e.name == name or e.func.__name__ == name]
    if len(matches) != 1:
        known = sorted(e.name for entries in GOOD.values() for e in entries)
        what = "ambiguous" if matches else "unknown"
        raise KeyError(f"{what} corpus entry {name!r}; known: {', '.join(known)}")
    return matches[0]
