"""Route-exchange crossover of two VRP solutions (compiled)."""

from typing import Any

from glns._core._instance import CoreInstance

def crossover(inst: CoreInstance, a_routes: Any, b_routes: Any, seed: int,
              level: int = 2) -> tuple[list[list[int]] | None, int]: ...
