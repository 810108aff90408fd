"""The destroy and repair arguments of ``glns.solve``, ``glns.solve_many`` and
``glns.sandbox.evaluate``, parsed in one place.

Each argument is one operator spec or a list of them (:mod:`glns.operators.spec`); or destroy
is an exported operator module, or the path of one, with repair left None: the module's best
pair runs, or its populations when it has no best pair (:mod:`glns.operators.exported`).
"""

from __future__ import annotations

import os
from typing import Any, Iterable, Sequence

from glns.exceptions import OperatorError
from glns.operators.exported import read_export
from glns.operators.operator import Operator
from glns.operators.spec import is_module_spec, parse_list

__all__ = ["parse_arguments", "parse_per_kind", "refuse_module_as_repair"]

Defaults = tuple[Sequence[Any], Sequence[Any]]


def refuse_module_as_repair(repair: Any) -> None:
    """An exported operator module goes alone in the destroy argument, never as repair."""
    if is_module_spec(repair):
        raise OperatorError(f"module {_name(repair)!r} passed as repair: pass an exported operator "
                            "module as the destroy argument, alone")


def parse_arguments(destroy: Any, repair: Any, kind: str, *, defaults: Defaults = ((), ()),
                    load: bool = True) -> tuple[list[Operator], list[Operator]]:
    """The (destroy, repair) Operators the arguments stand for on a problem of `kind`.

    defaults: the (destroy, repair) specs used for an argument that is None. load: as in
    :func:`glns.operators.spec.parse`. Raises OperatorError for an operator that does not
    parse, a module passed as repair or with a repair argument, or a module evolved for
    another kind; ValueError when a list is empty.
    """
    return parse_per_kind(destroy, repair, {kind}, defaults=defaults, load=load)[kind]


def parse_per_kind(destroy: Any, repair: Any, kinds: Iterable[str], *, defaults: Defaults = ((), ()),
                   load: bool = False) -> dict[str, tuple[list[Operator], list[Operator]]]:
    """:func:`parse_arguments` for every problem kind of `kinds` (they differ only for a module).

    Everything is checked here, before any run: with no kinds at all a module is checked
    against the kind it was evolved for. A module file is read once.
    """
    kinds = sorted(set(kinds))
    refuse_module_as_repair(repair)
    if is_module_spec(destroy):
        if repair is not None:
            raise OperatorError(f"module {_name(destroy)!r} passed with an explicit repair argument: "
                                "pass the module alone (runs its best pair) or module.DESTROY, "
                                "module.REPAIR")
        export = read_export(destroy, load=load)
        out = {}
        for kind in kinds or [export.problem]:
            export.check_problem(kind)
            out[kind] = _checked(*export.pair())
        return out
    both = _checked(parse_list(destroy, "destroy", default=defaults[0], load=load),
                    parse_list(repair, "repair", default=defaults[1], load=load))
    return {kind: both for kind in kinds}


def _checked(destroy: list[Operator], repair: list[Operator]) -> tuple[list[Operator], list[Operator]]:
    if not destroy or not repair:
        raise ValueError("give at least one destroy and one repair operator")
    return destroy, repair


def _name(module: Any) -> str:
    return getattr(module, "__name__", None) or os.fspath(module)
