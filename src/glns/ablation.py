"""Ablation switches: parts of the solver a benchmark can turn off to measure what they buy.

The environment variable ``GLNS_ABLATE`` names the parts to turn off, comma-separated, for
every process that imports glns afterwards (so worker processes of a benchmark inherit it)::

    GLNS_ABLATE=swap_star glns bench library --solvers default hgs ...

Turning a part off never changes what a run is allowed to return, only how it searches. A
name that is not in :data:`PARTS` is an error, so a typing slip cannot pass for an ablation.
"""

from __future__ import annotations

import os

__all__ = ["PARTS", "ENV", "ablated", "ablated_parts"]

ENV = "GLNS_ABLATE"

#: the parts that can be turned off, and what each one is
PARTS = {
    "swap_star": "SWAP* in the native VRP local search",
    "load_penalty": "penalised loads (SolveParams.load_penalty, whatever its value)",
}


def ablated_parts() -> tuple[str, ...]:
    """The parts ``GLNS_ABLATE`` turns off, sorted; ValueError for a name not in PARTS."""
    names = sorted({x.strip() for x in os.environ.get(ENV, "").split(",") if x.strip()})
    unknown = [x for x in names if x not in PARTS]
    if unknown:
        raise ValueError(f"{ENV}: unknown part(s) {', '.join(unknown)}; known: {', '.join(PARTS)}")
    return tuple(names)


def ablated(part: str) -> bool:
    """Whether ``GLNS_ABLATE`` turns `part` (a key of PARTS) off."""
    if part not in PARTS:
        raise KeyError(f"unknown ablation part {part!r}")
    return part in ablated_parts()
