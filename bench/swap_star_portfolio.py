"""glns's default portfolio with SWAP* in its local search (``local_search=3``) on every
instance, for ``glns bench ... --solvers default module:bench/swap_star_portfolio.py``: the same
operators and settings as ``glns.solve.DEFAULT_DESTROY`` / ``DEFAULT_REPAIR`` except the search
level. The default itself searches with SWAP* only on a CVRP or OVRP that is small or has short
routes (``glns.solve.SWAP_STAR_REPAIR``); elsewhere this module measures SWAP* against it."""

from glns import operators

DESTROY = [operators.native("string_removal")]
REPAIR = [operators.native("blink_insertion", order=4, local_search=3),
          operators.native("regret_insertion", k=2, local_search=3)]
PROBLEMS = ("cvrp", "ovrp", "vrptw")
