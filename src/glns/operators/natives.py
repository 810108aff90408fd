"""The registry of native (Cython) operators: names, kinds, problems, parameters and ranges.

Every entry comes from the operator's one declaration in the core's catalog
(``glns._core._native_ops``); docs/dev/adding-a-native-operator.md explains how to add one.
``NATIVE_OPERATORS[name]`` has ``kind`` ("destroy" or "repair"), ``problems``, ``params``
(its own :class:`Param` list), ``common`` (settings every operator of its kind takes:
``local_search`` for a repair operator), ``all_params`` (both, in the order of
``Operator.params``), ``removes`` (destroy: how many nodes it removes) and ``doc``.
"""

from __future__ import annotations

from typing import Mapping

from glns._core._native_ops import NATIVE_OPERATORS as _CATALOG
from glns._core._operator import REPAIR_COMMON, Declaration, Param
from glns.exceptions import OperatorError

__all__ = ["Param", "NativeSpec", "NATIVE_OPERATORS", "REPAIR_COMMON", "native_params"]

#: the type of a registry entry (declared in the core)
NativeSpec = Declaration

#: name -> declaration of every native operator, destroy operators first
NATIVE_OPERATORS: dict[str, NativeSpec] = {d.name: d for d in _CATALOG}


def native_params(name: str, given: Mapping[str, float]) -> tuple[float, ...]:
    """The parameter values of native operator `name` in the order of its ``all_params``:
    defaults overridden by `given`, checked (OperatorError for an unknown name or value)."""
    if name not in NATIVE_OPERATORS:
        raise OperatorError(f"unknown native operator {name!r}; choose from {sorted(NATIVE_OPERATORS)}")
    return NATIVE_OPERATORS[name].values(given)
