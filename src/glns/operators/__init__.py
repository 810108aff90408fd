"""Destroy and repair operators: native (Cython) ones and Python ones, mixable in one run.

>>> from glns import operators
>>> operators.native("worst_removal", randomness=5)          # doctest: +SKIP
>>> operators.from_source(code_string, "repair")             # doctest: +SKIP
>>> operators.from_callable(my_function, "destroy")          # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from glns.exceptions import OperatorError
from glns.operators.natives import NATIVE_OPERATORS, native_params
from glns.operators.bridge import compile_source, third_argument_convention

__all__ = ["Operator", "native", "from_source", "from_callable", "resolve", "NATIVE_OPERATORS"]

@dataclass(frozen=True)
class Operator:
    """A destroy or repair operator, native or Python.

    Build with :func:`native`, :func:`from_source` or :func:`from_callable`.
    """

    name: str
    kind: str                       # "destroy" or "repair"
    native_name: str | None = None  # set for native operators
    params: tuple[float, ...] = ()  # the native operator's parameters, in registry order
    func: Callable | None = field(default=None, compare=False)
    source: str | None = field(default=None, compare=False)
    convention: str = "problem_data"  # third argument of a Python operator

    @property
    def is_native(self) -> bool:
        return self.native_name is not None

    def bind(self, problem: Any, timeout: float | None = None, params: Any = None) -> Any:
        """The object the core's loop calls for this operator on `problem`.

        A Python operator is bound in the form ``glns.operators.accelerate`` chooses under
        `params` (a SolveParams; default settings when None): data view and compiled or not.
        """
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
    """A Python operator from a function with the signature of SPEC §3."""
    _check_kind(kind)
    if not callable(func):
        raise OperatorError(f"{func!r} is not callable")
    convention = third_argument_convention(func)
    return Operator(name=name or getattr(func, "__name__", kind), kind=kind, func=func,
                    convention=convention)


def from_source(source: str, kind: str, name: str | None = None,
                function: str | None = None) -> Operator:
    """A Python operator from source code (e.g. an LLM's answer's code block)."""
    _check_kind(kind)
    func = compile_source(source, kind, function)
    op = from_callable(func, kind, name or func.__name__)
    return Operator(name=op.name, kind=kind, func=func, source=source, convention=op.convention)


def resolve(spec: Any, kind: str) -> Operator:
    """An Operator from what users pass: an Operator, a native name, source code or a callable."""
    _check_kind(kind)
    if isinstance(spec, Operator):
        if spec.kind != kind:
            raise OperatorError(f"{spec.name!r} is a {spec.kind} operator, used as {kind}")
        return spec
    if isinstance(spec, str):
        if spec in NATIVE_OPERATORS:
            op = native(spec)
            if op.kind != kind:
                raise OperatorError(f"{spec!r} is a {op.kind} operator, used as {kind}")
            return op
        if "def " in spec:
            return from_source(spec, kind)
        natives = sorted(n for n, v in NATIVE_OPERATORS.items() if v.kind == kind)
        raise OperatorError(f"unknown {kind} operator {spec!r}; native ones are {natives}, "
                            "or pass a callable or source code")
    if callable(spec):
        return from_callable(spec, kind)
    raise OperatorError(f"cannot use {spec!r} as a {kind} operator")


def _check_kind(kind: str) -> None:
    if kind not in ("destroy", "repair"):
        raise OperatorError(f"kind must be 'destroy' or 'repair', got {kind!r}")
