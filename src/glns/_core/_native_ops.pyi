"""The catalog of native operators and entry points that run one by name (compiled)."""

from typing import Any, Mapping, Sequence

from glns._core._instance import CoreInstance
from glns._core._operator import Declaration
from glns._core._solution import Solution

VRP: frozenset[str]
NATIVE_OPERATORS: tuple[Declaration, ...]
NATIVE_DESTROY: dict[str, Declaration]
NATIVE_REPAIR: dict[str, Declaration]

def apply_destroy(name: str, inst: CoreInstance, routes: Any | Solution, k: int, seed: int,
                  params: Mapping[str, float] | Sequence[float] | None = None
                  ) -> tuple[list[int], Any, int]: ...
def apply_repair(name: str, inst: CoreInstance, partial: Any | Solution, removed: Sequence[int], seed: int,
                 params: Mapping[str, float] | Sequence[float] | None = None) -> tuple[Any, int]: ...
