"""Views: the forms of ``problem_data`` a Python operator can be given.

- ``"numpy"``: the arrays of :meth:`glns.problems.Problem.problem_data` (what operators always
  got), as private read-only copies backed by immutable ``bytes``: NumPy refuses to set such an
  array writeable again, so one copy can be shared by every operator on the problem and an
  operator can reach neither the core, the user's instance nor another operator's data.
- ``"python"``: the same values as nested tuples of Python numbers (``tolist()``: floats
  from float arrays, ints from integer arrays, so the integral demands and capacity a
  Problem holds are ints) and plain scalars. Indexing a tuple (``d[a][b]``) is several times
  faster than indexing an array, and tuples are immutable, so one copy is shared by all calls
  as well.

Both are built once per problem and view and cached while the problem lives. The dict returned
here is the cache's own: callers hand operators a shallow ``dict(...)`` copy per call.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

import numpy as np

__all__ = ["VIEWS", "MAX_PYTHON_VIEW_NODES", "view_data", "view_of_matrix", "cached_per_problem"]

VIEWS = ("numpy", "python")

#: above this many nodes the python view is not offered: an n x n tuple of Python floats takes
#: about 32 bytes per entry (128 MB at n = 2000), four times the array
MAX_PYTHON_VIEW_NODES = 2000

# id(problem) -> (weakref to the problem, {view: data}). Keyed by id, not by the object, since a
# problem type may define __eq__ without __hash__; a finaliser drops the entry when the problem
# dies, before its id can be reused.
_CACHE: dict[int, tuple[weakref.ref, dict[str, dict[str, Any]]]] = {}
_LOCK = threading.RLock()  # re-entrant: a finaliser may run from a GC inside the lock


def _sealed(a: np.ndarray) -> np.ndarray:
    """A read-only copy of `a` that cannot be made writeable (its memory is a bytes object)."""
    a = np.ascontiguousarray(a)
    return np.frombuffer(a.tobytes(), dtype=a.dtype).reshape(a.shape)


def _frozen(value: Any) -> Any:
    """An array as nested tuples of Python numbers; a NumPy scalar as a Python one."""
    if isinstance(value, np.ndarray):
        items = value.tolist()  # Python int/float/bool per dtype: the same numeric values
        return tuple(map(tuple, items)) if value.ndim == 2 else tuple(items)
    if isinstance(value, np.generic):
        return value.item()
    return value


def _build(problem: Any, view: str) -> dict[str, Any]:
    data = problem.problem_data()
    if view == "numpy":
        return {k: _sealed(v) if isinstance(v, np.ndarray) else v for k, v in data.items()}
    return {k: _frozen(v) for k, v in data.items()}


def _forget(key: int) -> None:
    with _LOCK:
        _CACHE.pop(key, None)


def _check(problem: Any, view: str) -> None:
    if view not in VIEWS:
        raise ValueError(f"unknown view {view!r}; expected one of {', '.join(VIEWS)}")
    if view == "python" and problem.n_nodes > MAX_PYTHON_VIEW_NODES:
        raise ValueError(f"the python view is limited to {MAX_PYTHON_VIEW_NODES} nodes, "
                         f"the instance has {problem.n_nodes}")


def cached_per_problem(problem: Any, key: Any, build: Any) -> Any:
    """build(), cached per problem object and key while the problem lives (built under a lock:
    two threads must not each pay for, and keep, a copy)."""
    pid = id(problem)
    with _LOCK:
        entry = _CACHE.get(pid)
        if entry is None or entry[0]() is not problem:
            entry = (weakref.ref(problem), {})
            _CACHE[pid] = entry
            weakref.finalize(problem, _forget, pid)
        values = entry[1]
        if key not in values:
            values[key] = build()
        return values[key]


def view_data(problem: Any, view: str) -> dict[str, Any]:
    """The ``problem_data`` dict of `problem` in form `view` ("numpy" or "python"), cached.

    The dict is shared: give an operator ``dict(view_data(...))``, never the dict itself.
    Raises ValueError for an unknown view, or "python" above MAX_PYTHON_VIEW_NODES nodes.
    """
    _check(problem, view)
    return cached_per_problem(problem, view, lambda: _build(problem, view))


def view_of_matrix(problem: Any, view: str) -> Any:
    """The bare distance matrix in form `view`, for operators whose third parameter is the
    matrix (the cached ``view_data(problem, view)["distance_matrix"]``)."""
    return view_data(problem, view)["distance_matrix"]
