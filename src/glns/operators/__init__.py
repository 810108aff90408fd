"""Destroy and repair operators: native (Cython) ones and Python ones, mixable in one run.

>>> from glns import operators
>>> operators.native("worst_removal", randomness=5)          # doctest: +SKIP
>>> operators.from_source(code_string, "repair")             # doctest: +SKIP
>>> operators.from_callable(my_function, "destroy")          # doctest: +SKIP
>>> operators.parse("mypkg.ops:shaw_removal", "destroy")     # doctest: +SKIP

What may be passed as an operator, and how it is read, is defined once in
:mod:`glns.operators.spec` (one operator) and :mod:`glns.operators.arguments` (the destroy and
repair arguments, including exported modules read by :mod:`glns.operators.exported`).
"""

from __future__ import annotations

from typing import Any

from glns.operators.natives import NATIVE_OPERATORS
from glns.operators.operator import Operator, from_callable, from_source, native
from glns.operators.spec import PythonSource, parse

__all__ = ["Operator", "native", "from_source", "from_callable", "parse", "resolve", "PythonSource",
           "NATIVE_OPERATORS"]


def resolve(spec: Any, kind: str) -> Operator:
    """A loaded Operator from what users pass (same as :func:`glns.operators.spec.parse`)."""
    return parse(spec, kind)
