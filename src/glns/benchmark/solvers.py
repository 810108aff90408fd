"""The solvers a benchmark can run, by name.

glns configurations (run with :func:`glns.solve_many`, every instance with its own seed):

- ``default``: ``glns.solve``'s tuned native portfolio.
- ``paper``: the paper's seed operators (random and worst removal, greedy insertion) with the
  paper's parameter preset -- G-LNS before any evolution.
- ``standard``: the paper's "standard ALNS" (random, worst and related removal; greedy, regret-2
  and regret-3 insertion), native, paper preset.
- ``NAME:KEY=VALUE,...`` for one of those three: the same with :class:`glns.SolveParams` fields
  changed (values as Python literals), e.g. ``default:load_penalty=0.3``; a dict changes fields
  of a parameter that is itself a dataclass, e.g. ``default:epochs={'starts':3}``.
- ``module:PATH``: the operators of a Python file (read by
  :func:`glns.operators.exported.read_export`): a G-LNS export (its best pair, or its
  populations if it has none) or any module defining DESTROY and REPAIR (one operator or a list
  each: native names, source code, or functions of that file), and optionally PROBLEMS.
  ``population:PATH``: a G-LNS export's final populations.

Baselines (``ortools``, ``pyvrp``, ``lkh``, ``alns``, ``hgs``): :mod:`glns.benchmark.baselines`, optional
extra ``bench``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field, is_dataclass, replace
from pathlib import Path
from typing import Any

from glns.operators.exported import read_export
from glns.params import SolveParams

__all__ = ["SolverSpec", "parse_solver", "GLNS_SOLVERS", "BASELINE_NAMES"]

PAPER_SEEDS = (("random_removal", "worst_removal"), ("greedy_insertion",))
BASELINE_NAMES = ("ortools", "pyvrp", "lkh", "alns", "hgs")


@dataclass
class SolverSpec:
    """One solver of a benchmark.

    name: its key in the results ("default", "ortools", "module:best_operators"). label: its
    row title. kind: "glns" or "baseline". problems: the kinds it solves (None: all).
    destroy, repair, params: the glns configuration (glns solvers only). budget: "iterations" or
    "time" -- which budget it runs on.
    """

    name: str
    label: str
    kind: str
    budget: str
    problems: tuple[str, ...] | None = None
    destroy: Any = None
    repair: Any = None
    params: SolveParams | None = None
    info: dict[str, Any] = field(default_factory=dict)

    def solves(self, problem: str) -> bool:
        return self.problems is None or problem in self.problems


def _standard() -> tuple[tuple, tuple]:
    from glns.operators import native

    return (("random_removal", "worst_removal", "related_removal"),
            ("greedy_insertion", "regret_insertion", native("regret_insertion", k=3)))


GLNS_SOLVERS = {
    "default": "glns default portfolio",
    "paper": "glns seed operators, paper preset",
    "standard": "standard ALNS (native), paper preset",
}


def _module_operators(path: Path, population: bool) -> tuple[Any, Any, tuple[str, ...] | None, str]:
    """(destroy, repair, problem kinds or None, what runs) of the operator module at `path`."""
    export = read_export(path, load=False, plain=True)
    if export.problem is not None:           # a G-LNS export
        if population:
            return list(export.destroy), list(export.repair), (export.problem,), "populations"
        destroy, repair = export.pair()
        return destroy, repair, (export.problem,), "best pair" if export.best else "populations"
    if population:
        raise ValueError(f"population:{path} needs a G-LNS export (with PROBLEM, DESTROY, REPAIR); "
                         "use module:PATH for other operator modules")
    return list(export.destroy), list(export.repair), export.problems, "DESTROY/REPAIR"


def _parse_changes(name: str, changes: str) -> dict[str, Any]:
    """"KEY=VALUE,..." read by Python's own parser as keyword arguments, so that a value may be
    a dict or a tuple of several items (epochs={'elite': 4, 'temperature': 0.3}); a value that
    is not a literal is taken as its text (initial=random)."""
    source = f"_({changes})"
    try:
        call = ast.parse(source, mode="eval").body
    except SyntaxError:
        call = None
    if (not isinstance(call, ast.Call) or call.args or not call.keywords
            or any(k.arg is None for k in call.keywords)):
        raise ValueError(f"solver {name!r}: give SolveParams changes as KEY=VALUE,...")
    values: dict[str, Any] = {}
    for keyword in call.keywords:
        try:
            values[keyword.arg] = ast.literal_eval(keyword.value)
        except ValueError:
            values[keyword.arg] = ast.get_source_segment(source, keyword.value)
    return values


def _with_params(name: str, base: str, changes: str) -> SolverSpec:
    """The glns configuration `base` with the SolveParams fields of "KEY=VALUE,..." changed."""
    spec = parse_solver(base)
    values = _parse_changes(name, changes)
    base_params = spec.params or SolveParams()
    for key, value in values.items():
        # a dict changes the fields of a parameter that is itself a dataclass: epochs={'starts': 3}
        current = getattr(base_params, key, None)
        if isinstance(value, dict) and is_dataclass(current):
            try:
                values[key] = replace(current, **value)
            except TypeError as e:
                raise ValueError(f"solver {name!r}: {e}") from None
    try:
        params = replace(base_params, **values)
    except TypeError as e:
        raise ValueError(f"solver {name!r}: {e}") from None
    return SolverSpec(name, f"{spec.label} ({changes})", "glns", spec.budget, problems=spec.problems,
                      destroy=spec.destroy, repair=spec.repair, params=params)


def parse_solver(name: str) -> SolverSpec:
    """The :class:`SolverSpec` of a solver name (see the module docstring); ValueError if unknown."""
    base, colon, changes = name.partition(":")
    if colon and base in GLNS_SOLVERS:
        return _with_params(name, base, changes)
    if name == "default":
        return SolverSpec(name, GLNS_SOLVERS[name], "glns", "iterations")
    if name == "paper":
        return SolverSpec(name, GLNS_SOLVERS[name], "glns", "iterations", destroy=PAPER_SEEDS[0],
                          repair=PAPER_SEEDS[1], params=SolveParams.paper())
    if name == "standard":
        destroy, repair = _standard()
        return SolverSpec(name, GLNS_SOLVERS[name], "glns", "iterations", destroy=destroy,
                          repair=repair, params=SolveParams.paper())
    scheme, _, rest = name.partition(":")
    if scheme in ("module", "population") and rest:
        path = Path(rest)
        if not path.is_file():
            raise ValueError(f"solver {name!r}: no such file {path}")
        destroy, repair, problems, what = _module_operators(path, scheme == "population")
        return SolverSpec(f"{scheme}:{path.stem}", f"glns {path.stem} ({what})", "glns", "iterations",
                          problems=problems, destroy=destroy, repair=repair, info={"path": str(path.resolve())})
    if name in BASELINE_NAMES:
        from glns.benchmark.baselines import BASELINES

        b = BASELINES[name]
        return SolverSpec(name, b.label, "baseline", b.budget, problems=tuple(b.problems),
                          info={"version": b.version()})
    known = ", ".join([*GLNS_SOLVERS, *BASELINE_NAMES, "NAME:KEY=VALUE,...", "module:PATH",
                       "population:PATH"])
    raise ValueError(f"unknown solver {name!r}; solvers: {known}")
