"""The seed members of the populations: the paper's random and worst removal and greedy
insertion, as self-contained readable Python sources (docs/method.md)."""

from __future__ import annotations

import inspect
import types

from glns.evolution.population import Member
from glns.operators.seeds import BY_PROBLEM

__all__ = ["SEED_NAMES", "seed_source", "seed_members"]

#: kind -> seed operator names, in population order
SEED_NAMES = {"destroy": ("random_removal", "worst_removal"), "repair": ("greedy_insertion",)}


def seed_source(problem: str, name: str) -> str:
    """The source of one seed operator with the imports and module helpers it uses, so that it
    runs on its own (and reads well as an example in a prompt)."""
    module = BY_PROBLEM[problem]
    func = getattr(module, name)
    helpers = [getattr(module, n) for n in func.__code__.co_names
               if isinstance(getattr(module, n, None), types.FunctionType) and n != name]
    parts = ["import random"] + [inspect.getsource(h).rstrip() for h in helpers]
    parts.append(inspect.getsource(func).rstrip())
    return "\n\n\n".join(parts) + "\n"


def seed_members(problem: str, native: bool = False) -> tuple[list[Member], list[Member]]:
    """(destroy seeds, repair seeds) with ids d0, d1, r0; native=True runs them natively."""
    out: dict[str, list[Member]] = {"destroy": [], "repair": []}
    for kind, names in SEED_NAMES.items():
        for i, name in enumerate(names):
            func = getattr(BY_PROBLEM[problem], name)
            out[kind].append(Member(
                id=f"{kind[0]}{i}", kind=kind, source=seed_source(problem, name), function=name,
                idea=inspect.getdoc(func).split("\n\n")[0].replace("\n", " "), action="seed",
                native=name if native else None))
    return out["destroy"], out["repair"]
