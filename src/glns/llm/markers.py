"""Markers that every G-LNS prompt carries, so that any reader can tell what is asked.

The evolution controller's prompt builder writes one problem line and one operator-type line
into every prompt, e.g.::

    Problem: CVRP
    Operator type: destroy

The offline test server (:mod:`glns.offline_llm`) reads them to answer with an operator of the
right kind; a real LLM reads them as part of the task. For the synergistic joint crossover
(``c2``), which asks for a destroy and a repair operator in one answer, the operator type is
``destroy and repair``.

Without markers the offline server falls back to keywords (see :func:`detect`), which is less
reliable; prompt builders should always include both lines (use :func:`marker_lines`).
"""

from __future__ import annotations

import re

#: problem names as they appear after PROBLEM_PREFIX
PROBLEMS = ("TSP", "CVRP", "OVRP", "VRPTW")
#: operator types as they appear after OPERATOR_PREFIX; JOINT is the c2 answer (both kinds)
DESTROY = "destroy"
REPAIR = "repair"
JOINT = "destroy and repair"
OPERATOR_TYPES = (DESTROY, REPAIR, JOINT)

PROBLEM_PREFIX = "Problem:"
OPERATOR_PREFIX = "Operator type:"

_PROBLEM_RE = re.compile(r"Problem:[ \t]*(TSP|CVRP|OVRP|VRPTW)\b")
_OPERATOR_RE = re.compile(r"Operator type:[ \t]*(destroy and repair|destroy|repair)\b")


def problem_marker(problem: str) -> str:
    """The problem line, e.g. ``problem_marker("cvrp") == "Problem: CVRP"``."""
    name = problem.upper()
    if name not in PROBLEMS:
        raise ValueError(f"problem must be one of tsp, cvrp, ovrp, vrptw, got {problem!r}")
    return f"{PROBLEM_PREFIX} {name}"


def operator_marker(kind: str) -> str:
    """The operator-type line: kind is 'destroy', 'repair' or 'joint' (or 'destroy and repair')."""
    value = JOINT if kind in ("joint", "both", JOINT) else kind
    if value not in OPERATOR_TYPES:
        raise ValueError(f"operator kind must be 'destroy', 'repair' or 'joint', got {kind!r}")
    return f"{OPERATOR_PREFIX} {value}"


def marker_lines(problem: str, kind: str) -> str:
    """Both marker lines, ready to paste into a prompt."""
    return f"{problem_marker(problem)}\n{operator_marker(kind)}"


def detect(text: str) -> tuple[str, str]:
    """(problem, kind) asked for in a prompt: ('tsp'|'cvrp'|'ovrp'|'vrptw',
    'destroy'|'repair'|'joint').

    Uses the first marker lines found; without them, keywords: 'VRPTW'/'time window' before
    'OVRP'/'open' before 'CVRP'/
    'capacit' before TSP, and 'destroy' and 'repair' both present in a crossover-like prompt
    ("joint"/"pair"). Defaults: TSP and destroy.
    """
    m = _PROBLEM_RE.search(text)
    if m:
        problem = m.group(1).lower()
    elif re.search(r"\bVRPTW\b|time windows?\b", text, re.IGNORECASE):
        problem = "vrptw"
    elif re.search(r"\bOVRP\b|open vehicle routing", text, re.IGNORECASE):
        problem = "ovrp"
    elif re.search(r"\bCVRP\b|capacitated vehicle routing|\bcapacity\b", text, re.IGNORECASE):
        problem = "cvrp"
    else:
        problem = "tsp"
    m = _OPERATOR_RE.search(text)
    if m:
        kind = {DESTROY: "destroy", REPAIR: "repair", JOINT: "joint"}[m.group(1)]
    else:
        low = text.lower()
        has_d, has_r = "destroy" in low, "repair" in low
        if has_d and has_r and re.search(r"joint|unified|pair", low):
            kind = "joint"
        elif has_r and (not has_d or low.find("repair") < low.find("destroy")):
            kind = "repair"
        else:
            kind = "destroy"
    return problem, kind
