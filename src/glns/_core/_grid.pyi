"""Nearest-neighbour lists from coordinates (compiled)."""

import numpy as np

def coordinate_neighbours(coords: np.ndarray, first: int, max_neighbours: int, nint: bool) -> np.ndarray: ...
def quadrant_candidates(coords: np.ndarray, nearest: np.ndarray, first: int, columns: int,
                        per_quadrant: int, reach: float, nint: bool) -> np.ndarray: ...
