"""The open vehicle routing problem: as CVRP, but a route ends at its last customer."""

from __future__ import annotations

from glns.problems.cvrp import CVRP

__all__ = ["OVRP"]


class OVRP(CVRP):
    """Open VRP: as CVRP, but a route ends at its last customer (no return to the depot).

    The objective is the total length of the routes without the edges back to the depot.

    Parameters
    ----------
    coords : array_like of shape (n+1, 2), optional
        Node coordinates, the depot first: distances are Euclidean (see `rounding`). Give
        coordinates, a distance matrix, or both (then the matrix is used).
    demands : array_like of shape (n+1,)
        Integer demand of each node, the depot first with demand 0; each at most `capacity`.
        Required.
    capacity : int
        The vehicle capacity, a positive integer. Required.
    distances : array_like of shape (n+1, n+1), optional
        An explicit distance matrix (finite, non-negative); row and column 0 are the depot.
    name : str, default ""
        The instance's name.
    rounding : {"exact", "nint", "dimacs"}, default "exact"
        How distances follow from the coordinates when no matrix is given: the raw
        Euclidean distance, TSPLIB's ``nint(d) = floor(d + 0.5)``, or DIMACS's truncation to
        one decimal, ``floor(10 d) / 10``.

    Raises
    ------
    InvalidInstanceError
        When the data are malformed: coordinates or a matrix of the wrong shape, NaN or
        infinite values, negative distances or demands, non-integer demands, a depot demand
        other than 0, a demand above the capacity, a capacity that is not a positive integer,
        missing demands or capacity, fewer than 2 nodes.
    """

    kind = "ovrp"
    label = "OVRP"
    closed_routes = False
    core_code = 2
    description = (
        "Open vehicle routing problem (OVRP). Node 0 is the depot, the customers are 1..n, "
        "each with a demand; vehicles have one capacity and their number is unlimited. A "
        "solution is a list of routes, each a list of customer ids; the depot is not written. "
        "Routes are open: a route starts at the depot, visits its customers in order and ends "
        "at its last customer, with NO return to the depot. Every customer is in exactly one "
        "route, exactly once, and the total demand of a route must not exceed the capacity. "
        "Objective: minimise the total length of the routes, depot -> first customer -> ... -> "
        "last customer (the last customer -> depot edge is not counted)."
    )
    data_description = CVRP.data_description.replace('"open_routes": False', '"open_routes": True')
