"""The native local search, for tests and benchmarks (compiled)."""

from typing import Any, Sequence

from glns._core._instance import CoreInstance

NEIGHBOURS: int
REL_EPS: float

def local_search_py(inst: CoreInstance, routes: Any, touched: Sequence[int] | None = None,
                    return_cost: bool = False, seconds: float | None = None,
                    level: int = 1, load_weight: float | None = None) -> Any: ...
def set_swap_star(on: bool) -> bool: ...
