"""The :class:`Operator` type, its constructors, and the wire form that carries it to workers.

An Operator is *loaded* when it can run in this process (native, or with its Python function);
an unloaded one holds only what is needed to load it elsewhere: source code that has not been
executed, or an import path that has not been imported. Worker processes get an operator as a
small picklable tuple (:meth:`Operator.wire`) and rebuild it with :meth:`Operator.from_wire`,
so untrusted source is only ever executed where it runs. See docs/operator-contract.md.
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass, field, replace
from typing import Any, Callable

from glns.exceptions import OperatorError
from glns.operators.bridge import compile_source, third_argument_convention
from glns.operators.natives import NATIVE_OPERATORS, native_params

__all__ = ["Operator", "native", "from_source", "from_callable", "KINDS"]

#: the two kinds of operator
KINDS = ("destroy", "repair")

#: a wire: ("native", name, params, display name), ("python", source, function, display name)
#: or ("import", "pkg.mod:function", display name); a display name of None means "the
#: function's own name"
Wire = tuple


@dataclass(frozen=True)
class Operator:
    """A destroy or repair operator, native or Python.

    Build with :func:`native`, :func:`from_source` or :func:`from_callable`, or parse anything a
    user passes with :func:`glns.operators.spec.parse`. ``function`` is the entry function of
    ``source``; ``import_path`` (``"package.module:function"``) is how a worker imports
    ``func``. An unloaded operator (source not executed, path not imported) has ``func`` None
    and, when no name was given, ``name`` "" (named after its function once loaded).
    """

    name: str
    kind: str                       # "destroy" or "repair"
    native_name: str | None = None  # set for native operators
    params: tuple[float, ...] = ()  # the native operator's parameters, in registry order
    func: Callable | None = field(default=None, compare=False)
    source: str | None = field(default=None, compare=False)
    convention: str = "problem_data"  # third argument of a Python operator
    function: str | None = field(default=None, compare=False)
    import_path: str | None = field(default=None, compare=False)

    @property
    def is_native(self) -> bool:
        return self.native_name is not None

    @property
    def loaded(self) -> bool:
        """True when the operator can run in this process (native or with its function)."""
        return self.is_native or self.func is not None

    def load(self) -> "Operator":
        """This operator, able to run here: source is executed, an import path imported.

        Raises OperatorError when the source does not compile or the path does not import.
        """
        if self.loaded:
            return self
        if self.source is not None:
            return from_source(self.source, self.kind, name=self.name or None, function=self.function)
        if self.import_path is not None:
            return _load_import(self.import_path, self.kind, self.name or None)
        raise OperatorError(f"{self.name!r} has neither a function, source code nor an import path")

    def wire(self) -> Wire:
        """The picklable description a worker process rebuilds this operator from.

        Raises OperatorError for a Python operator that has no source and whose function cannot
        be imported by name in another process.
        """
        if self.is_native:
            return ("native", self.native_name, tuple(self.params), self.name)
        if self.source is not None:
            entry = self.function or (self.func.__name__ if self.func is not None else None)
            return ("python", self.source, entry, self.name or None)
        path = self.import_path or callable_path(self.func)
        if path is None:
            raise OperatorError(
                f"{self.name!r} cannot be sent to a worker process: it has no source code and its "
                "function cannot be imported by name there (a lambda, a nested function or defined "
                "in __main__); pass its source code (operators.from_source, glns.sandbox.PythonSource) "
                "or a module-level function")
        return ("import", path, self.name or None)

    @staticmethod
    def from_wire(wire: Wire, kind: str) -> "Operator":
        """The operator a :meth:`wire` describes, unloaded (call :meth:`load` to run it)."""
        if wire[0] == "native":
            _, native_name, params, name = wire
            return Operator(name=name, kind=kind, native_name=native_name, params=tuple(params))
        if wire[0] == "import":
            _, path, name = wire
            return Operator(name=name or "", kind=kind, import_path=path)
        _, source, function, name = wire
        return Operator(name=name or "", kind=kind, source=source, function=function)

    def bind(self, problem: Any, timeout: float | None = None, params: Any = None) -> Any:
        """The object the core's loop calls for this operator on `problem`.

        A Python operator is bound in the form ``glns.operators.accelerate`` chooses under
        `params` (a SolveParams; default settings when None): data view and compiled or not.
        """
        if not self.loaded:
            return self.load().bind(problem, timeout, params)
        if self.is_native:
            supported = NATIVE_OPERATORS[self.native_name].problems
            if problem.kind not in supported:
                raise OperatorError(f"native operator {self.native_name!r} does not handle "
                                    f"{problem.kind.upper()} (only {', '.join(sorted(k.upper() for k in supported))})")
            return NATIVE_OPERATORS[self.native_name].bind(self.params)
        from glns.operators.accelerate import bind_python
        from glns.params import SolveParams

        return bind_python(self, problem, timeout, params if params is not None else SolveParams())


def native(name: str, **params: float) -> Operator:
    """A native operator by name, e.g. ``native("worst_removal", randomness=3.0)``.

    See ``glns.operators.natives.NATIVE_OPERATORS`` for every operator and its parameters.
    """
    values = native_params(name, params)
    return Operator(name=name, kind=NATIVE_OPERATORS[name].kind, native_name=name, params=values)


def from_callable(func: Callable, kind: str, name: str | None = None) -> Operator:
    """A Python operator from a function with the signature of docs/operator-contract.md."""
    check_kind(kind)
    if not callable(func):
        raise OperatorError(f"{func!r} is not callable")
    convention = third_argument_convention(func)
    return Operator(name=name or getattr(func, "__name__", kind), kind=kind, func=func,
                    convention=convention)


def from_source(source: str, kind: str, name: str | None = None,
                function: str | None = None) -> Operator:
    """A Python operator from source code (e.g. an LLM's answer's code block)."""
    check_kind(kind)
    func = compile_source(source, kind, function)
    return replace(from_callable(func, kind, name or func.__name__), source=source, function=func.__name__)


def check_kind(kind: str) -> None:
    """OperatorError unless kind is "destroy" or "repair"."""
    if kind not in KINDS:
        raise OperatorError(f"kind must be 'destroy' or 'repair', got {kind!r}")


def check_module_found(path: str) -> None:
    """OperatorError when the module of ``"package.module:function"`` cannot be found.

    Finding does not import it: the caller of a worker pool checks what it can without running
    the module, and the workers import it.
    """
    module = path.partition(":")[0]
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise OperatorError(f"cannot import module {module!r} of {path!r}")


def import_attribute(path: str) -> Any:
    """The object ``"package.module:attr.attr"`` names (exceptions of the import propagate)."""
    module, _, attrs = path.partition(":")
    obj: Any = importlib.import_module(module)
    for attr in attrs.split("."):
        obj = getattr(obj, attr)
    return obj


def callable_path(func: Any) -> str | None:
    """"module:qualname" when func can be imported back by that path (module-level), else None."""
    module, qualname = getattr(func, "__module__", None), getattr(func, "__qualname__", None)
    if not module or not qualname or module == "__main__" or "<" in qualname:
        return None
    path = f"{module}:{qualname}"
    try:
        return path if import_attribute(path) is func else None
    except Exception:
        return None


def _load_import(path: str, kind: str, name: str | None) -> Operator:
    check_module_found(path)
    try:
        obj = import_attribute(path)
    except Exception as exc:
        raise OperatorError(f"cannot import {path!r}: {type(exc).__name__}: {exc}") from None
    if isinstance(obj, Operator):
        if obj.kind != kind:
            raise OperatorError(f"{path!r} is a {obj.kind} operator, used as {kind}")
        return obj.load()
    if not callable(obj) or isinstance(obj, type):
        raise OperatorError(f"{path!r} is a {type(obj).__name__}, not an operator function")
    return replace(from_callable(obj, kind, name), import_path=path)
