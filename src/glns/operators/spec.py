"""One parser for everything a user may pass as an operator.

:func:`parse` turns one operator spec into an :class:`Operator`, with the same result and the
same error messages for every caller (``glns.solve``, ``glns.solve_many``,
``glns.sandbox.evaluate``, ``glns bench``, the evolution). Accepted, for a kind "destroy" or
"repair":

- an :class:`Operator` (of that kind);
- a native operator's name, e.g. ``"worst_removal"`` (``glns.operators.NATIVE_OPERATORS``);
- operator source code (a string containing ``def``), or a :class:`PythonSource`;
- a Python callable (docs/operator-contract.md);
- ``"package.module:function"``: a function (or Operator) importable by that path;
- ``"path/to/file.py:function"``: a function of a Python file, run like operator source.

An exported operator module (``glns.evolution.export``), or the path of one, stands for whole
destroy and repair arguments, not for one operator: see :mod:`glns.operators.arguments`.

With ``load=False`` no operator code is executed: source stays text and an import path is only
checked to name a module that exists. (An exported module, or its path, is imported in the
caller all the same: it is the user's own file, and its operators are built on import.) That is how worker pools parse, so that untrusted code runs only
in their workers (which load the operators they get by :meth:`Operator.wire`).
"""

from __future__ import annotations

import os
import re
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from glns.exceptions import OperatorError
from glns.operators.natives import NATIVE_OPERATORS
from glns.operators.operator import Operator, Wire, check_kind, check_module_found, from_callable, native

__all__ = ["PythonSource", "parse", "parse_list", "wires", "is_module_spec", "IMPORT_PATH", "FILE_FUNCTION"]

#: "package.module:function" (the function may be a dotted attribute path, e.g. "mod:Class.f")
IMPORT_PATH = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")
#: "path/to/file.py:function" (the last colon separates the function, so "C:\\x.py:f" works)
FILE_FUNCTION = re.compile(r"^(?P<file>.+\.py):(?P<function>[A-Za-z_]\w*)$")

_FORMS = ("a native name, an Operator, a callable, source code, 'package.module:function' or "
          "'path/to/file.py:function'")


@dataclass(frozen=True)
class PythonSource:
    """Operator source code with its entry function and display name.

    Unlike an Operator built with ``from_source``, nothing of it is executed until it is
    loaded, so a worker pool's caller never runs untrusted code itself.
    """

    source: str
    function: str | None = None
    name: str | None = None


def parse(spec: Any, kind: str, *, load: bool = True) -> Operator:
    """The Operator `spec` stands for (see the module docstring for the accepted forms).

    load: True gives an Operator that can run here (source executed, path imported); False
    executes nothing (see the module docstring). Raises OperatorError for anything else, an
    operator of the other kind, or source / a path that does not load.
    """
    check_kind(kind)
    op = _parse(spec, kind)
    if op.kind != kind:
        raise OperatorError(f"{op.name!r} is a {op.kind} operator, used as {kind}")
    return op.load() if load else op


def parse_list(spec: Any, kind: str, *, default: Iterable[Any] = (), load: bool = True) -> list[Operator]:
    """The Operators of one destroy or repair argument: one spec or a list (None: `default`).

    An error names the operator's position: "destroy operator 2: ...".
    """
    specs = _as_list(spec, default, kind)
    out = []
    for i, s in enumerate(specs):
        try:
            out.append(parse(s, kind, load=load))
        except OperatorError as exc:
            raise OperatorError(f"{kind} operator {i}: {exc}") from None
    return out


def wires(ops: Iterable[Operator]) -> list[Wire]:
    """The wires (:meth:`Operator.wire`) of a list of operators of one kind, errors with positions."""
    out = []
    for i, op in enumerate(ops):
        try:
            out.append(op.wire())
        except OperatorError as exc:
            raise OperatorError(f"{op.kind} operator {i}: {exc}") from None
    return out


def is_module_spec(spec: Any) -> bool:
    """True for what stands for a whole operator module: a module, or the path of a .py file
    (a ``pathlib.Path``, or a string ending in ``.py``)."""
    if isinstance(spec, (types.ModuleType, os.PathLike)):
        return True
    return isinstance(spec, str) and spec.endswith(".py") and "def " not in spec and "\n" not in spec


def _as_list(spec: Any, default: Iterable[Any], kind: str) -> list[Any]:
    if spec is None:
        return list(default)
    if isinstance(spec, (str, Operator, PythonSource, os.PathLike, types.ModuleType)) or callable(spec):
        return [spec]
    try:
        return list(spec)
    except TypeError:
        raise OperatorError(f"cannot use {spec!r} as a {kind} operator: pass {_FORMS}") from None


def _parse(spec: Any, kind: str) -> Operator:
    """The (unloaded where possible) Operator of one spec; the caller checks its kind."""
    if isinstance(spec, Operator):
        return spec
    if isinstance(spec, PythonSource):
        return Operator(name=spec.name or "", kind=kind, source=spec.source, function=spec.function)
    if is_module_spec(spec):
        name = getattr(spec, "__name__", None) or os.fspath(spec)
        raise OperatorError(f"{name!r} is an operator module: pass it alone, as the destroy argument "
                            "(it then stands for its destroy and repair operators)")
    if isinstance(spec, str):
        return _parse_text(spec, kind)
    if callable(spec):
        return from_callable(spec, kind)
    raise OperatorError(f"cannot use {spec!r} as a {kind} operator: pass {_FORMS}")


def _parse_text(text: str, kind: str) -> Operator:
    if text in NATIVE_OPERATORS:
        return native(text)
    if "def " in text:
        return Operator(name="", kind=kind, source=text)
    match = FILE_FUNCTION.match(text)
    if match:
        return _file_function(Path(match["file"]), match["function"], kind)
    if IMPORT_PATH.match(text):
        check_module_found(text)
        return Operator(name="", kind=kind, import_path=text)
    natives = sorted(n for n, v in NATIVE_OPERATORS.items() if v.kind == kind)
    raise OperatorError(f"unknown native operator {text!r}, and neither source code nor an import "
                        f"path: unknown {kind} operator {text!r}; native {kind} operators are "
                        f"{natives}; or pass {_FORMS}")


#: ends the lines ``glns compile`` adds to a module it deploys (glns.deploy)
DEPLOY_MARK = "# added by glns compile"
#: the directory beside a deployed module that holds its compiled twins
DEPLOYED_DIR = "compiled"


def deployed_source(text: str) -> str:
    """`text` without the lines ``glns compile`` added to it: the operators' own source, which
    their compiled twins are keyed by. Text without them is returned as it is."""
    if DEPLOY_MARK not in text:
        return text
    lines = text.splitlines(keepends=True)
    return "".join(line for line in lines if not (line.rstrip().endswith(DEPLOY_MARK)
                                                  or line.startswith("_glns_compiler.add_search_dir(")))


def _file_function(path: Path, function: str, kind: str) -> Operator:
    """A function of a Python file: the whole file is its source (executed like operator source,
    where it runs), so it travels to workers as text. A file deployed by ``glns compile`` lends
    its compiled twins (its ``compiled/`` directory becomes a search directory of the cache)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise OperatorError(f"cannot read {str(path)!r} for '{path}:{function}': {exc.strerror or exc}") from None
    source = deployed_source(text)
    if source is not text and (path.parent / DEPLOYED_DIR).is_dir():
        from glns.compiler import add_search_dir

        add_search_dir(path.parent / DEPLOYED_DIR)
    return Operator(name=function, kind=kind, source=source, function=function)

