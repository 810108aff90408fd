"""The result of an evolution run as one importable Python module (docs/file-formats.md).

:func:`module_text` writes every operator of the final populations (and the best pair) into a
module a human can read: a docstring with the run's facts, each operator's source verbatim as a
string constant with its lineage in a comment above it, and the operators built from those
constants at import time. ``glns.solve(problem, module)`` runs the module's best pair.

Each source is compiled on its own with :func:`glns.operators.from_source`, exactly as during
evolution: sources may use ``np``/``random``/... without importing them, and several may define
a function called ``destroy``, so pasting them into one namespace would break them.
"""

from __future__ import annotations

import ast
import json
import os
import pprint
import re
from pathlib import Path
from typing import Any, Mapping, Sequence

from glns.evolution.population import Member
from glns.evolution.rundir import atomic_write
from glns.operators import exported as fmt
from glns.operators.exported import load_module
from glns.policy import parse_source
from glns.problems import PROBLEM_KINDS
from glns.version import __version__

__all__ = ["module_text", "export_module", "load_module", "string_literal", "atomic_write"]

#: meta keys shown first in the docstring, with their labels
_LABELS = {"problem": "Problem", "run_dir": "Run directory", "seed": "Seed", "cycle": "Cycle",
           "episodes": "Episodes", "best_score": "Validation score of the best pair",
           "validation": "Validation set", "glns_version": "glns version"}


def string_literal(text: str) -> str:
    """A Python literal for `text` that reads back exactly: r'''...''' when possible (readable
    code), else r\"\"\"...\"\"\", else repr().

    A raw triple-quoted literal cannot hold its own quotes, cannot end with a backslash (it would
    escape the closing quotes) or with its quote character, and control characters other than
    newline and tab would not survive (``\\r`` is turned into a newline when Python reads the
    file); such text falls through to the next form.
    """
    plain = all(c in "\n\t" or c.isprintable() for c in text) and not text.endswith("\\")
    for quote in ("'''", '"""'):
        if plain and quote not in text and not text.endswith(quote[0]):
            literal = f"r{quote}{text}{quote}"
            # belt and braces: never a wrong round trip (parsed under the parse lock:
            # a cycle is exported while other threads examine LLM answers)
            if ast.literal_eval(parse_source(literal).body[0].value) == text:
                return literal
    return repr(text)


def _comment(text: str) -> str:
    """`text` on one comment line (line breaks would end the comment)."""
    return " ".join(str(text).split())


def _identifier(member_id: str, taken: set[str]) -> str:
    base = re.sub(r"\W", "_", member_id, flags=re.ASCII).upper().strip("_") or "OPERATOR"
    if base[0].isdigit():
        base = f"OP_{base}"
    name, k = f"{base}_SOURCE", 2
    while name in taken:
        name, k = f"{base}_{k}_SOURCE", k + 1
    taken.add(name)
    return name


def _json_meta(meta: Mapping[str, Any]) -> dict[str, Any]:
    try:
        # round trip: tuples become lists, and anything not JSON-able (or inf/nan) is refused
        return json.loads(json.dumps(dict(meta), allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"meta must be JSON-able (finite numbers, str keys): {exc}") from None


def _collect(destroy: Sequence[Member], repair: Sequence[Member],
             best: tuple[Member, Member] | None) -> dict[str, Member]:
    """Every member once, by id, in order of appearance; checks kinds and id clashes."""
    members: dict[str, Member] = {}
    slots = [(m, "destroy", "destroy population") for m in destroy]
    slots += [(m, "repair", "repair population") for m in repair]
    if best is not None:
        if len(best) != 2:
            raise ValueError(f"best must be a (destroy, repair) pair, got {len(best)} members")
        slots += [(best[0], "destroy", "best pair"), (best[1], "repair", "best pair")]
    for m, kind, where in slots:
        if not isinstance(m, Member):
            raise TypeError(f"{where}: expected a Member, got {type(m).__name__}")
        if m.kind != kind:
            raise ValueError(f"{where}: {m.id!r} is a {m.kind} operator, expected {kind}")
        seen = members.setdefault(m.id, m)
        if seen != m:
            raise ValueError(f"two different operators share the id {m.id!r}")
    return members


def _docstring(problem: str, meta: Mapping[str, Any], destroy: Sequence[Member],
               repair: Sequence[Member], best: tuple[Member, Member] | None) -> str:
    lines = [f"Operators evolved by G-LNS for the {problem.upper()}.", ""]
    for key, label in _LABELS.items():
        if key in meta:
            lines.append(f"{label}: {meta[key]}")
    lines += [f"{key}: {json.dumps(meta[key])}" for key in meta if key not in _LABELS]
    lines += ["",
              f"Destroy population: {', '.join(m.id for m in destroy) or '(empty)'}",
              f"Repair population: {', '.join(m.id for m in repair) or '(empty)'}",
              f"Best pair: {best[0].id} + {best[1].id}" if best else "Best pair: none",
              "",
              "Use:",
              "    import glns",
              "    from glns.evolution.export import load_module",
              "    ops = load_module('path/to/this_file.py')   # or import it from sys.path",
              "    glns.solve(problem, ops)                    # the best pair",
              "    glns.solve(problem, ops.DESTROY, ops.REPAIR)  # the final populations",
              "",
              f"The operators suit {problem.upper()} instances only; glns.solve refuses others.",
              ""]
    return "\n".join(lines)


def _member_block(m: Member, const: str) -> list[str]:
    parents = ", ".join(m.parents) if m.parents else "none"
    lines = [f"# {_comment(m.id)}: {m.kind}, action {_comment(m.action)}, parents {_comment(parents)}, "
             f"cycle {m.cycle}"]
    if m.idea:
        lines.append(f"# idea: {_comment(m.idea)}")
    if m.native is not None:
        lines.append(f"# runs natively as {_comment(m.native)!s}; the source is its readable "
                     "plain-Python twin")
    lines.append(f"{const} = {string_literal(m.source)}")
    return lines


def _build_expr(m: Member, const: str) -> str:
    if m.native is not None:
        native_name = repr(m.native)
        return (f"Operator(name={m.id!r}, kind={m.kind!r}, native_name={native_name}, "
                f"params=native({native_name}).params)")
    return f"from_source({const}, {m.kind!r}, name={m.id!r}, function={m.function or None!r})"


def module_text(destroy: Sequence[Member], repair: Sequence[Member],
                best: tuple[Member, Member] | None, meta: Mapping[str, Any]) -> str:
    """The source of a module holding the populations `destroy`, `repair` and the `best` pair.

    meta: JSON-able facts about the run; ``meta["problem"]`` ("tsp", "cvrp" or "ovrp") is
    required. Known keys (run_dir, seed, cycle, episodes, best_score, validation) are shown
    with labels in the docstring, any others as ``key: value``; ``glns_version`` is added when
    missing. The module defines DESTROY, REPAIR (lists of Operator), BEST_DESTROY, BEST_REPAIR
    (None without a best pair), BEST, PROBLEM and META.
    """

    problem = str(meta.get("problem", "")).lower()
    if problem not in PROBLEM_KINDS:
        raise ValueError(f"meta['problem'] must be one of {tuple(PROBLEM_KINDS)}, got {meta.get('problem')!r}")
    meta = _json_meta({**meta, "problem": problem})
    meta.setdefault("glns_version", __version__)
    members = _collect(destroy, repair, best)

    taken: set[str] = set()
    consts = {mid: _identifier(mid, taken) for mid in members}
    out = [string_literal(_docstring(problem, meta, destroy, repair, best)), "",
           "# Generated by glns.evolution.export; the sources below are verbatim.",
           "from glns.operators import Operator, from_source, native", "",
           f"{fmt.PROBLEM} = {problem!r}",
           f"{fmt.META} = {pprint.pformat(meta, width=96)}"]
    written: set[str] = set()
    for title, group in (("destroy population", destroy), ("repair population", repair),
                         ("best pair (no longer in the populations)", best or ())):
        todo = [m for m in group if m.id not in written]
        if not todo:
            continue
        out += ["", "", f"# {'=' * 20} {title}"]
        for m in todo:
            out += [""] + _member_block(m, consts[m.id])
            written.add(m.id)

    out += ["", "", f"# {'=' * 20} the operators, each source compiled in its own namespace", "",
            "_OPERATORS = {"]
    out += [f"    {mid!r}: {_build_expr(m, consts[mid])}," for mid, m in members.items()]
    out += ["}", "",
            f"{fmt.DESTROY} = [{', '.join(f'_OPERATORS[{m.id!r}]' for m in destroy)}]",
            f"{fmt.REPAIR} = [{', '.join(f'_OPERATORS[{m.id!r}]' for m in repair)}]"]
    if best is not None:
        out += [f"{fmt.BEST_DESTROY} = _OPERATORS[{best[0].id!r}]",
                f"{fmt.BEST_REPAIR} = _OPERATORS[{best[1].id!r}]"]
    else:
        out += [f"{fmt.BEST_DESTROY} = None", f"{fmt.BEST_REPAIR} = None"]
    out += [f"{fmt.BEST} = ({fmt.BEST_DESTROY}, {fmt.BEST_REPAIR})", ""]
    text = "\n".join(out)
    compile(text, "<exported module>", "exec")  # a bug here must not produce a broken file
    return text


def export_module(path: str | os.PathLike, destroy: Sequence[Member], repair: Sequence[Member],
                  best: tuple[Member, Member] | None, meta: Mapping[str, Any]) -> Path:
    """Write :func:`module_text` to `path` atomically (see :func:`atomic_write`); returns the
    path. Load it with :func:`load_module`, or import it normally from ``sys.path``."""
    return atomic_write(path, module_text(destroy, repair, best, meta))
