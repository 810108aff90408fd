"""The open vehicle routing problem: as CVRP, but a route ends at its last customer."""

from __future__ import annotations

from glns.problems.cvrp import CVRP

__all__ = ["OVRP"]


class OVRP(CVRP):
    """Open VRP: as CVRP, but a route ends at its last customer (no return to the depot)."""

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
