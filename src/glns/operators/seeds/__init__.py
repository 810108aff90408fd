"""Readable plain-Python seed operators (the G-LNS seeds, docs/method.md).

Each function is the twin of a native operator: given the same random stream (pass a
``glns.rng.SplitMix64`` as ``rng``) it returns exactly what the native operator returns. With
the default ``rng=random`` they are ordinary operators following docs/operator-contract.md,
and their source serves as the in-context example shown to the LLM.
"""

from glns.operators.seeds import tsp as tsp, vrp as vrp, vrptw as vrptw

#: problem kind -> module of seed operators
BY_PROBLEM = {"tsp": tsp, "cvrp": vrp, "ovrp": vrp, "vrptw": vrptw}
