"""Writing solutions as files other tools read: CVRPLIB ``.sol`` and TSPLIB ``.tour``.

Node numbers are the inverse of :func:`glns.datasets.read`: node ``k`` of an instance is node
``k + 1`` of its file (the depot, file node 1, is node 0).

- ``.sol`` (CVRPLIB, read by ``vrplib.read_solution``, PyVRP and the CVRPLIB tools): one line
  ``Route #i: c1 c2 ...`` per route with the customers' glns node ids, which is the CVRPLIB
  numbering (the depot is not written; customer ``c`` is file node ``c + 1``), then
  ``Cost <objective>``. A TSP is written as a one-route VRP from city 0 (file node 1), the
  way a VRP solver such as PyVRP treats a TSPLIB file: the tour is rotated to start at city 0,
  which is not written.
- ``.tour`` (TSPLIB, TSP only; the format of the library's ``.opt.tour`` files and of LKH's
  tours, read by :func:`glns.datasets.read_solution`): the tour as found, with 1-based file
  node ids, ending ``-1`` and ``EOF``.

The format follows the file name (``.tour`` or anything else for ``.sol``) unless given. See
docs/instance-files.md.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from glns.problems import Problem, problem_class
from glns.result import Result

__all__ = ["solution_format", "write_solution"]

FORMATS = ("sol", "tour")


def solution_format(path: str | os.PathLike, kind: str, format: str | None = None) -> str:
    """The file format (``"sol"`` or ``"tour"``) for writing a `kind` solution to `path`.

    ``format`` None: ``"tour"`` for a name ending in ``.tour``, else ``"sol"``. Raises ValueError
    for an unknown format or problem kind, or a ``.tour`` for a problem with a depot. Lets a
    caller refuse a bad output path before a long solve.
    """
    cls = problem_class(kind)
    fmt = format if format is not None else ("tour" if str(path).lower().endswith(".tour") else "sol")
    if fmt not in FORMATS:
        raise ValueError(f"unknown solution format {format!r}; expected 'sol' or 'tour'")
    if fmt == "tour" and cls.has_depot:
        raise ValueError(f"a TSPLIB .tour holds one TSP tour; write the {cls.label} solution as a .sol file")
    return fmt


def _format_cost(cost: float) -> str:
    # integral costs (nint instances) as integers like the CVRPLIB files; others in full precision
    cost = float(cost)
    return str(int(cost)) if cost.is_integer() else repr(cost)


def _sol_routes(cls: type[Problem], solution: Any) -> list[list[int]]:
    routes = cls.routes_of(solution)
    if cls.has_depot:
        # an empty route is an unused vehicle: it costs nothing and the format cannot write it
        return [route for route in routes if route]
    tour = routes[0]
    start = tour.index(0)
    return [tour[start + 1:] + tour[:start]]


def _sol_text(cls: type[Problem], solution: Any, cost: float) -> str:
    lines = [f"Route #{i}: {' '.join(map(str, route))}"
             for i, route in enumerate(_sol_routes(cls, solution), 1)]
    return "\n".join([*lines, f"Cost {_format_cost(cost)}", ""])


def _tour_text(cls: type[Problem], solution: Any, cost: float, name: str) -> str:
    tour = cls.routes_of(solution)[0]
    return "\n".join([f"NAME : {name}", f"COMMENT : glns, cost {_format_cost(cost)}", "TYPE : TOUR",
                      f"DIMENSION : {len(tour)}", "TOUR_SECTION", *(str(v + 1) for v in tour),
                      "-1", "EOF", ""])


def write_solution(path: str | os.PathLike, solution: Result | Any, problem: Problem | None = None,
                   *, format: Literal["sol", "tour"] | None = None) -> Path:
    """Write a solution as a CVRPLIB ``.sol`` or TSPLIB ``.tour`` file.

    Parameters
    ----------
    path : str or os.PathLike
        The file to write (its folder must exist). ``.tour``: a TSPLIB tour (TSP only);
        any other name: a CVRPLIB ``.sol``, unless ``format`` says otherwise.
    solution : Result or list
        A :class:`glns.Result` (its best solution and cost), or a solution in the operator
        format (TSP: a list of cities; VRP: a list of routes), which needs ``problem``.
    problem : Problem or None, optional
        The instance solved. Required for a plain solution (its cost is computed); with a
        Result it is optional and checks that the result solves this instance.
    format : {"sol", "tour"} or None, optional
        ``"sol"`` or ``"tour"``, to override the file name.

    Returns
    -------
    pathlib.Path
        The path written.

    Raises
    ------
    ValueError
        When a plain solution comes without ``problem``, a Result does not solve ``problem``,
        or the format does not fit the problem.
    InfeasibleSolutionError
        When the solution is not a feasible solution of ``problem``.
    OSError
        When the file cannot be written.
    """
    if isinstance(solution, Result):
        kind, sol, cost = solution.problem_kind, solution.solution, solution.cost
        if problem is not None:
            if problem.kind != kind:
                raise ValueError(f"the result is a {kind.upper()} solution but the problem is a "
                                 f"{problem.label}")
            problem.check(sol)
    elif problem is None:
        raise ValueError("a plain solution needs the problem it solves: "
                         "write_solution(path, solution, problem)")
    else:
        kind, sol, cost = problem.kind, solution, problem.cost(solution)
    cls = problem_class(kind)
    path = Path(path)
    if solution_format(path, kind, format) == "tour":
        text = _tour_text(cls, sol, cost, path.name)
    else:
        text = _sol_text(cls, sol, cost)
    path.write_text(text, encoding="utf-8")
    return path
