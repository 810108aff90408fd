"""``glns compile``: turn an operator file into a directory that runs its operators compiled.

"Evolve in Python, deploy native": every Python operator of an evolution export, of a file that
defines ``DESTROY`` and ``REPAIR``, or of any Python file (every top-level function with the
paper's destroy or repair signature, ``(x, destroy_cnt, problem_data)`` or ``(partial,
removed, problem_data)``; helpers and constants of the file are compiled with it) is compiled
by Cython into ``OUT/compiled/``, its form is negotiated on the synthetic probe instances of its
problem kind (``glns.operators.probe``), and

- ``OUT/<name>.py`` is the same module, its functions under their names, preceded by two lines
  that make ``OUT/compiled/`` a search directory of the compiled-operator cache: importing it
  (``from OUT.name import my_repair``) or naming a function (``"OUT/name.py:my_repair"``) and
  calling ``glns.solve`` runs the compiled twins with no compile step, also on another machine
  with the same Python and platform;
- ``OUT/report.json`` and ``OUT/report.md`` give each operator's compile status, chosen form
  and the speed-up measured on the probes.

See docs/fast-operators.md.
"""

from __future__ import annotations

import ast
import inspect
import json
import random
import re
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from glns.exceptions import OperatorError
from glns.operators import Operator
from glns.operators.exported import Export, read_export
from glns.operators.operator import from_callable
from glns.operators.spec import DEPLOY_MARK, DEPLOYED_DIR, deployed_source
from glns.policy import parse_source
from glns.problems import PROBLEM_KINDS

__all__ = ["OperatorReport", "compile_operator_file"]

COMPILED_DIR = DEPLOYED_DIR

#: the second parameter of a destroy operator (how many to remove) and of a repair (what to insert)
_DESTROY_COUNT = re.compile(r"cnt|count|^k$|^n$|num|size|amount|degree|how_many", re.IGNORECASE)
_REPAIR_NODES = re.compile(r"remov|missing|unassigned|unrouted|pool|bank|insert", re.IGNORECASE)


@dataclass(frozen=True)
class OperatorReport:
    """What ``glns compile`` did with one operator."""

    name: str
    kind: str
    status: str               # compile status (glns.compiler.CompileOutcome.status) or "native"
    compile_seconds: float
    form: str                 # the chosen form ("python", "compiled+python", ...)
    speedup: float | None     # interpreted numpy time / chosen form time, on the probes
    reason: str


def _operators(export: Export) -> list[Operator]:
    """Every operator of the export once: the populations, then a best pair no longer in them."""
    best = export.best or ()
    seen: dict[int, Operator] = {}
    for op in (*export.destroy, *best[:1], *export.repair, *best[1:]):
        seen.setdefault(id(op), op)
    return list(seen.values())


def _speedup(negotiation: Any) -> float | None:
    trials = {t.form.label(): t for t in negotiation.trials}
    ref, chosen = trials.get("numpy"), trials.get(negotiation.chosen.label())
    if ref is None or chosen is None or not chosen.seconds > 0:
        return None
    return ref.seconds / chosen.seconds


def operator_kind(func: Any) -> str | None:
    """"destroy" or "repair" for a function with the paper's operator signature (three
    positional parameters, the second naming a count or the removed nodes, else the function's
    name saying which), None for anything else (a helper)."""
    try:
        params = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):
        return None
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(positional) < 3 or any(p.default is p.empty for p in positional[3:]):
        return None
    second, name = positional[1].name, func.__name__.lower()
    if _DESTROY_COUNT.search(second):
        return "destroy"
    if _REPAIR_NODES.search(second):
        return "repair"
    if "destroy" in name or "remov" in name:
        return "destroy"
    if "repair" in name or "insert" in name:
        return "repair"
    return None


def _plain_functions(path: Path) -> list[Operator]:
    """The operators of a plain Python file: its top-level functions with an operator
    signature, in file order, each with the whole file as its source (helpers included)."""
    from glns.operators.exported import load_module

    text = deployed_source(path.read_text(encoding="utf-8"))
    module = load_module(path)
    ops = []
    for node in parse_source(text).body:
        if isinstance(node, ast.FunctionDef):
            func = getattr(module, node.name, None)
            kind = operator_kind(func) if inspect.isfunction(func) else None
            if kind is not None:   # the module's own function (the file ran once), with the file as source
                ops.append(replace(from_callable(func, kind), source=text, function=node.name))
    return ops


def _guess_problem(text: str) -> str:
    """The problem kind to probe a plain file's operators on: a VRP if they read demands or a
    capacity, else a TSP."""
    return "cvrp" if re.search(r"demand|capacit", text) else "tsp"


def compile_operator_file(path: str | Path, out_dir: str | Path, *, timeout: float = 300.0,
                          progress: Any = None, problem: str | None = None) -> list[OperatorReport]:
    """Compile every Python operator of the file `path` into `out_dir` (see module doc).

    The file is imported (it is the caller's own file, not untrusted LLM output: evolution
    exports only hold operators that passed admission). problem: the kind of problem to probe
    on when the file does not say (PROBLEM); default: CVRP if its code reads demands or a
    capacity, else TSP. Raises OperatorError when it defines no operator; operators that do not
    compile are reported, not raised.
    """
    from glns import compiler
    from glns.operators.accelerate import compilable_source
    from glns.operators.probe import Form, negotiate, probe_problem

    path, out = Path(path), Path(out_dir)
    if problem is not None and problem not in PROBLEM_KINDS:
        raise ValueError(f"problem must be one of {sorted(PROBLEM_KINDS)}, got {problem!r}")
    try:
        export = read_export(path, plain=True)
        operators, kind = _operators(export), export.problem
    except OperatorError as exc:
        operators, kind = _plain_functions(path), None
        if not operators:
            raise OperatorError(f"{path} is not an operator module glns compile can use: {exc}; nor "
                                "does it define functions with a destroy signature (x, destroy_cnt, "
                                "problem_data) or a repair signature (partial, removed, problem_data)") from None
    problem = kind or problem or _guess_problem(path.read_text(encoding="utf-8"))
    probe = probe_problem(problem)
    cache = out / COMPILED_DIR
    cache.mkdir(parents=True, exist_ok=True)
    reports = []
    saved = (random.getstate(), np.random.get_state())
    try:
        for op in operators:
            if op.is_native:
                reports.append(OperatorReport(op.name, op.kind, "native", 0.0, "native", None, ""))
                continue
            source, entry, why_not = compilable_source(op)
            candidates: list[tuple[Any, Any]] = [(Form("python"), op.func)]
            status, seconds, note = "not compilable", 0.0, why_not
            if source is not None:
                t0 = time.perf_counter()
                outcome = compiler.compile_source(source, timeout=timeout, cache_dir=cache)
                seconds, status, note = time.perf_counter() - t0, outcome.status, outcome.reason or ""
                if outcome.ok:
                    from glns.operators.bridge import OPERATOR_GLOBALS

                    twin = getattr(compiler.load_module(outcome, OPERATOR_GLOBALS), entry)
                    candidates += [(Form("numpy", True), twin), (Form("python", True), twin)]
            decision = negotiate(op.func, op.kind, probe, op.convention, candidates=candidates)
            reason = decision.reason + (f"; {note}" if note else "")
            reports.append(OperatorReport(op.name, op.kind, status, round(seconds, 3),
                                          decision.chosen.label(), _speedup(decision), reason))
            if progress:
                progress(f"{op.kind} {op.name}: {status}, {decision.chosen.label()}")
    finally:
        random.setstate(saved[0])
        np.random.set_state(saved[1])
    _write_module(path, out)
    _write_reports(path, out, problem, reports)
    return reports


def _write_module(path: Path, out: Path) -> None:
    prologue = (f"import pathlib as _glns_pathlib, glns.compiler as _glns_compiler  {DEPLOY_MARK}\n"
                f"_glns_compiler.add_search_dir(_glns_pathlib.Path(__file__).parent / {COMPILED_DIR!r})"
                f"  {DEPLOY_MARK}\n")
    text = deployed_source(path.read_text())   # (compiling a deployed file again)
    # a leading docstring and `from __future__` imports must stay first
    lines = text.splitlines(keepends=True)
    cut = _prologue_position(text)
    (out / path.name).write_text("".join(lines[:cut]) + prologue + "".join(lines[cut:]))


def _prologue_position(text: str) -> int:
    """The line index after the module docstring and any ``from __future__`` imports."""
    import ast

    tree = parse_source(text)
    cut = 0
    for i, node in enumerate(tree.body):
        is_doc = i == 0 and isinstance(node, ast.Expr) and isinstance(getattr(node, "value", None), ast.Constant) \
            and isinstance(node.value.value, str)
        is_future = isinstance(node, ast.ImportFrom) and node.module == "__future__"
        if not (is_doc or is_future):
            break
        cut = node.end_lineno or cut
    return cut


def _write_reports(path: Path, out: Path, problem: str, reports: list[OperatorReport]) -> None:
    (out / "report.json").write_text(json.dumps(
        {"source": str(path), "problem": problem, "operators": [asdict(r) for r in reports]}, indent=2) + "\n")
    rows = ["| operator | kind | compile | compile time | form | speed-up on probes | why |",
            "|---|---|---|---|---|---|---|"]
    for r in reports:
        speed = f"{r.speedup:.2f}x" if r.speedup is not None else "–"
        rows.append(f"| {r.name} | {r.kind} | {r.status} | {r.compile_seconds:.1f} s | {r.form} | "
                    f"{speed} | {r.reason.replace('|', '/')} |")
    (out / "report.md").write_text(f"# glns compile {path.name} ({problem.upper()})\n\n" + "\n".join(rows) + "\n")
