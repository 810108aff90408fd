"""The one reader of operator modules: evolution exports and plain DESTROY/REPAIR files.

An exported module (written by ``glns.evolution.export``) defines the attributes named below:
PROBLEM (the kind of problem its operators were evolved for), DESTROY and REPAIR (the final
populations), BEST_DESTROY and BEST_REPAIR (the best pair, or both None), BEST and META.
:func:`read_export` reads one, given as a module or as the path of its file, into an
:class:`Export` of Operators; ``glns.solve``, ``glns.solve_many``, ``glns.sandbox.evaluate``,
``glns bench`` and ``glns compile`` all read modules through it. See docs/file-formats.md.
"""

from __future__ import annotations

import importlib.util
import inspect
import itertools
import os
import re
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from glns.exceptions import OperatorError
from glns.operators.operator import Operator, callable_path
from glns.operators.spec import PythonSource, deployed_source, parse
from glns.problems import PROBLEM_KINDS

__all__ = ["Export", "read_export", "load_module", "PROBLEM", "DESTROY", "REPAIR", "BEST_DESTROY",
           "BEST_REPAIR", "BEST", "META", "PROBLEMS", "REQUIRED"]

# the format's attribute names (the writer, glns.evolution.export, uses these)
PROBLEM = "PROBLEM"
DESTROY = "DESTROY"
REPAIR = "REPAIR"
BEST_DESTROY = "BEST_DESTROY"
BEST_REPAIR = "BEST_REPAIR"
BEST = "BEST"
META = "META"
#: a plain operator module (not an export) may list the problem kinds it suits
PROBLEMS = "PROBLEMS"
#: what an exported module must define
REQUIRED = (PROBLEM, DESTROY, REPAIR)

_load_counter = itertools.count(1)


@dataclass(frozen=True)
class Export:
    """The operators of an operator module.

    name: the module's name or file path, for messages. problem: the kind its operators were
    evolved for (None for a plain module without PROBLEM). problems: the kinds it may run on
    (None: any). destroy, repair: its populations. best: its best pair, or None.
    """

    name: str
    problem: str | None
    problems: tuple[str, ...] | None
    destroy: tuple[Operator, ...]
    repair: tuple[Operator, ...]
    best: tuple[Operator, Operator] | None

    def pair(self) -> tuple[list[Operator], list[Operator]]:
        """What the module stands for in a run: its best pair, else its populations."""
        if self.best is not None:
            return [self.best[0]], [self.best[1]]
        return list(self.destroy), list(self.repair)

    def check_problem(self, kind: str) -> None:
        """OperatorError unless the module's operators are meant for problems of `kind`
        (operators only run on the kind of problem they were evolved for)."""
        if self.problem is not None and self.problem != kind:
            raise OperatorError(f"operators evolved for {self.problem.upper()} used on a {kind.upper()} "
                                f"(module {self.name!r}); a module only runs on the problem kind it "
                                "was evolved for")
        if self.problems is not None and kind not in self.problems:
            raise OperatorError(f"module {self.name!r} is for {', '.join(p.upper() for p in self.problems)} "
                                f"only (its PROBLEMS), used on a {kind.upper()}")


def read_export(module_or_path: types.ModuleType | str | os.PathLike, *, load: bool = True,
                plain: bool = False) -> Export:
    """The :class:`Export` of a module, or of the Python file at a path (imported afresh).

    plain: also accept a module without PROBLEM that defines DESTROY and REPAIR (one operator
    or a list each; optionally PROBLEMS, the kinds it suits), as ``glns bench`` does. A
    function defined in the module's own file that cannot be imported by name becomes an
    operator whose source is that file, so it can run in worker processes too. load: as in
    :func:`glns.operators.spec.parse`. Raises OperatorError when something is missing, the
    best pair is incomplete, PROBLEM is no problem kind, or an operator does not parse.
    """
    if isinstance(module_or_path, types.ModuleType):
        module, name = module_or_path, module_or_path.__name__
    else:
        name = os.fspath(module_or_path)
        try:
            module = load_module(module_or_path)
        except FileNotFoundError:
            raise OperatorError(f"no such operator module file: {name}") from None
    needed = (DESTROY, REPAIR) if plain and not hasattr(module, PROBLEM) else REQUIRED
    missing = [a for a in needed if not hasattr(module, a)]
    if missing and needed is REQUIRED:
        raise OperatorError(f"module {name!r} is not an exported G-LNS operator module: it has no "
                            f"{', '.join(missing)} (write one with glns.evolution.export.export_module)")
    if missing:
        raise OperatorError(f"{name} defines no {' or '.join(missing)}: an operator module needs "
                            "DESTROY and REPAIR (one operator or a list each), or is a G-LNS export")
    problem = _problem(module, name)
    best_d, best_r = getattr(module, BEST_DESTROY, None), getattr(module, BEST_REPAIR, None)
    if (best_d is None) != (best_r is None):
        raise OperatorError(f"module {name!r} has an incomplete best pair: BEST_DESTROY is {best_d!r}, "
                            f"BEST_REPAIR is {best_r!r}")
    problems = getattr(module, PROBLEMS, None) if problem is None else None
    read = _Reader(module, name, load)
    best = None if best_d is None else (read.one(best_d, "destroy", BEST_DESTROY),
                                        read.one(best_r, "repair", BEST_REPAIR))
    return Export(name=name, problem=problem,
                  problems=tuple(str(p).lower() for p in problems) if problems else None,
                  destroy=read.many(getattr(module, DESTROY), "destroy", DESTROY),
                  repair=read.many(getattr(module, REPAIR), "repair", REPAIR), best=best)


def load_module(path: str | os.PathLike) -> types.ModuleType:
    """Import the Python file at `path` under a fresh, unique module name (not added to
    ``sys.modules``, so loading two exports, or one twice, never mixes them up)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no such file: {path}")
    stem = re.sub(r"\W", "_", path.stem, flags=re.ASCII)
    name = f"glns_evolved_{stem}_{next(_load_counter)}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path} as a Python module")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _problem(module: types.ModuleType, name: str) -> str | None:
    if not hasattr(module, PROBLEM):
        return None
    problem = str(getattr(module, PROBLEM)).lower()
    if problem not in PROBLEM_KINDS:
        raise OperatorError(f"module {name!r}: PROBLEM is {getattr(module, PROBLEM)!r}, not one of "
                            f"{sorted(PROBLEM_KINDS)}")
    return problem


class _Reader:
    """Parses a module's operator attributes; the same object gives the same Operator."""

    def __init__(self, module: types.ModuleType, name: str, load: bool) -> None:
        self.module, self.name, self.load = module, name, load
        self.file = getattr(module, "__file__", None)
        self.seen: dict[tuple[int, str], Operator] = {}

    def many(self, specs: Any, kind: str, attr: str) -> tuple[Operator, ...]:
        if isinstance(specs, (str, Operator, PythonSource)) or callable(specs):
            specs = [specs]
        try:
            specs = list(specs)
        except TypeError:
            raise OperatorError(f"module {self.name!r}: {attr} must be an operator or a list of them, "
                                f"got {type(specs).__name__}") from None
        return tuple(self.one(s, kind, f"{attr}[{i}]") for i, s in enumerate(specs))

    def one(self, spec: Any, kind: str, where: str) -> Operator:
        key = (id(spec), kind)
        if key not in self.seen:
            try:
                self.seen[key] = parse(self._portable(spec), kind, load=self.load)
            except OperatorError as exc:
                raise OperatorError(f"module {self.name!r}: {where}: {exc}") from None
        return self.seen[key]

    def _portable(self, spec: Any) -> Any:
        """A function of the module's own file that cannot be imported by name (the file was
        loaded by path): the file's source with the function's name instead."""
        if not (inspect.isfunction(spec) and self.file and spec.__module__ == self.module.__name__
                and getattr(self.module, spec.__name__, None) is spec and callable_path(spec) is None):
            return spec
        try:
            source = deployed_source(Path(self.file).read_text(encoding="utf-8"))
        except OSError:
            return spec
        return PythonSource(source, function=spec.__name__, name=spec.__name__)
