"""Route drawings: a solution on the instance's coordinates, one colour per route."""

from __future__ import annotations

from typing import Any

import numpy as np

from glns.exceptions import InfeasibleSolutionError
from glns.plot._mpl import new_figure
from glns.problems import Problem, plural
from glns.result import Result

__all__ = ["route_paths", "route_figure"]


def _routes(problem: Problem, solution: Any) -> list[list[int]]:
    """The solution as lists of node ids (TSP: one tour), checked against the instance."""
    n = problem.n_nodes
    try:
        routes = problem.routes_of(solution)
    except (TypeError, ValueError):
        raise ValueError(f"a {problem.label} solution must be {problem.solution_shape()}") from None
    first = problem.first_node
    for route in routes:
        for v in route:
            if not first <= v < n:
                raise ValueError(f"node {v} is not a {problem.node_word} of this "
                                 f"instance (ids {first}..{n - 1})")
    return [r for r in routes if r]


def route_paths(problem: Problem, solution: Any) -> list[np.ndarray]:
    """The (k, 2) vertex coordinates drawn for each route: a TSP tour closed back to its first
    city; a CVRP route from the depot back to the depot; an OVRP route from the depot to its
    last customer (open). Empty routes are left out. ValueError without coordinates."""
    if problem.coords is None:
        raise ValueError("drawing routes needs node coordinates; this instance has only a "
                         "distance matrix")
    xy = np.asarray(problem.coords, dtype=float)
    paths = []
    for route in _routes(problem, solution):
        paths.append(xy[problem.route_path(route)])
    return paths


def _title(problem: Problem, solution: Any, n_routes: int) -> str:
    name = problem.name or f"{problem.label} with {problem.n_customers} {plural(problem.node_word)}"
    try:
        cost = f"cost {problem.cost(solution):.6g}"
    except InfeasibleSolutionError as exc:
        cost = f"infeasible: {exc}"
    if not problem.has_depot:   # one tour
        return f"{name}: {cost}"
    return f"{name}: {cost}, {n_routes} route{'s' if n_routes != 1 else ''}"


def route_figure(problem: Problem, solution: Any | Result, title: str | None = None) -> Any:
    """Draw `solution` (TSP: a tour; CVRP/OVRP: routes without the depot; or a glns.Result)
    on `problem`'s coordinates: one line per route, each its own colour; the depot a black
    square. Returns the matplotlib Figure. The default title names the instance, the cost
    and the number of routes. ValueError when the instance has no coordinates or the
    solution names nodes that are not in it."""
    if isinstance(solution, Result):
        solution = solution.solution
    paths = route_paths(problem, solution)
    fig = new_figure(6.4, 6.4)
    ax = fig.subplots()
    xy = np.asarray(problem.coords, dtype=float)
    routable = xy[problem.first_node:]
    ax.scatter(routable[:, 0], routable[:, 1], s=12, color="0.25", zorder=3)
    if not problem.has_depot:   # one tour, one colour
        colours = ["C0"]
    else:
        from matplotlib import colormaps

        cmap = colormaps["tab20" if len(paths) > 10 else "tab10"]
        colours = [cmap(i % cmap.N) for i in range(len(paths))]
    for i, path in enumerate(paths):
        ax.plot(path[:, 0], path[:, 1], color=colours[i % len(colours)], linewidth=1.4,
                gid=f"route:{i}")
    if problem.has_depot:
        ax.scatter([xy[0, 0]], [xy[0, 1]], marker="s", s=90, color="black", zorder=4, label="depot")
        ax.legend(loc="best", fontsize="small")
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_title(title if title is not None else _title(problem, solution, len(paths)), fontsize="medium")
    ax.set_xticks([])
    ax.set_yticks([])
    fig.tight_layout()
    return fig
