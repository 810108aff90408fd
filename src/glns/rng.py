"""Pure-Python mirror of the core's SplitMix64 stream.

Plain-Python twins of the native operators and the reference ALNS loop draw from this class;
given the same seed they consume exactly the numbers the core draws, which lets tests compare
native and Python runs step by step. It offers the two methods the twins use from
:mod:`random` (``random()`` and ``randrange(n)``), so the twins run unchanged with the
standard module too.

:func:`run_seed` derives per-run solver seeds from a master seed (the evolution controller's
episodes, ``glns.solve_many``).
"""

from __future__ import annotations

import hashlib
from typing import Any

_MASK = 0xFFFFFFFFFFFFFFFF


class SplitMix64:
    """SplitMix64 generator, bit-identical to ``glns._core._rng``."""

    def __init__(self, seed: int = 0) -> None:
        self.state = seed & _MASK

    def next_u64(self) -> int:
        """Next raw 64-bit output."""
        self.state = (self.state + 0x9E3779B97F4A7C15) & _MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return z ^ (z >> 31)

    def random(self) -> float:
        """Uniform float in [0, 1) with 53 random bits."""
        return (self.next_u64() >> 11) * (1.0 / 9007199254740992.0)

    def randrange(self, n: int) -> int:
        """Integer in [0, n) by multiply-shift of the high 32 bits."""
        return ((self.next_u64() >> 32) * n) >> 32


def run_seed(master: int, *labels: Any) -> int:
    """A solver seed derived from a master seed and labels (e.g. "train", episode, instance).

    A hash, not a stream: each run's seed depends only on its own labels, so a batch gives every
    instance the same seed whatever the order, backend or number of workers that runs it. The
    result is below 2**63 (a valid ``glns.solve`` seed).
    """
    text = "|".join(str(x) for x in (master, *labels))
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big") >> 1
