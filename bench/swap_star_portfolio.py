"""glns's default portfolio with SWAP* in its local search (``local_search=3``), for
``glns bench ... --solvers default module:bench/swap_star_portfolio.py``: the same operators and
settings as ``glns.solve.DEFAULT_DESTROY`` / ``DEFAULT_REPAIR`` except the search level."""

from glns import operators

DESTROY = [operators.native("string_removal")]
REPAIR = [operators.native("blink_insertion", order=4, local_search=3),
          operators.native("regret_insertion", k=2, local_search=3)]
PROBLEMS = ("cvrp", "ovrp", "vrptw")
