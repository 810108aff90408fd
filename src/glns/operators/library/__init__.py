"""Plain-Python twins and references of the native operator library (``glns._core``).

Each function follows the operator contract (docs/operator-contract.md) plus ``rng=random`` and
the native operator's parameters as keywords. Given a ``glns.rng.SplitMix64`` it draws the same
random numbers in the same order as its native twin and returns exactly what the native operator
returns; with the default ``rng=random`` it is an ordinary (slow) Python operator.

Every native operator NAME has its twin here as ``destroy.NAME`` or ``repair.NAME`` (the
paper's seed operators delegate to ``glns.operators.seeds``); tests/test_native_registry.py
finds twins by that name.
"""

from glns.operators.library import destroy as destroy
from glns.operators.library import repair as repair
from glns.operators.library import local_search as local_search
from glns.operators.library import crossover as crossover
