"""Nearest-neighbour lists from coordinates (compiled)."""

import numpy as np

def coordinate_neighbours(coords: np.ndarray, first: int, max_neighbours: int, nint: bool) -> np.ndarray: ...
