"""``glns compile``: turn an operator file into a directory that runs its operators compiled.

"Evolve in Python, deploy native": every Python operator of an evolution export (or of any file
that defines ``DESTROY`` and ``REPAIR``) is compiled by Cython into ``OUT/compiled/``, its form
is negotiated on the probe instances of its problem kind (``glns.operators.probe``), and

- ``OUT/<name>.py`` is the same module, preceded by two lines that make ``OUT/compiled/`` a
  search directory of the compiled-operator cache: importing it and calling
  ``glns.solve(problem, module)`` runs the compiled twins with no compile step, also on another
  machine with the same Python and platform;
- ``OUT/report.json`` and ``OUT/report.md`` give each operator's compile status, chosen form
  and the speed-up measured on the probes.

See docs/fast-operators.md.
"""

from __future__ import annotations

import json
import random
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from glns.exceptions import OperatorError
from glns.operators import Operator
from glns.operators.exported import Export, read_export
from glns.policy import parse_source

__all__ = ["OperatorReport", "compile_operator_file"]

COMPILED_DIR = "compiled"


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


def compile_operator_file(path: str | Path, out_dir: str | Path, *, timeout: float = 300.0,
                          progress: Any = None) -> list[OperatorReport]:
    """Compile every Python operator of the module file `path` into `out_dir` (see module doc).

    The file is imported (it is the caller's own file, not untrusted LLM output: evolution
    exports only hold operators that passed admission). Raises ValueError when it is not an
    operator module; operators that do not compile are reported, not raised.
    """
    from glns import compiler
    from glns.operators.accelerate import compilable_source
    from glns.operators.probe import Form, negotiate, probe_problem

    path, out = Path(path), Path(out_dir)
    try:
        export = read_export(path)
    except OperatorError as exc:
        raise OperatorError(f"{path} is not an operator module glns compile can use: {exc}") from None
    problem = export.problem
    probe = probe_problem(problem)
    cache = out / COMPILED_DIR
    cache.mkdir(parents=True, exist_ok=True)
    reports = []
    saved = (random.getstate(), np.random.get_state())
    try:
        for op in _operators(export):
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
    prologue = ("import pathlib as _glns_pathlib, glns.compiler as _glns_compiler  # added by glns compile\n"
                f"_glns_compiler.add_search_dir(_glns_pathlib.Path(__file__).parent / {COMPILED_DIR!r})\n")
    text = path.read_text()
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
