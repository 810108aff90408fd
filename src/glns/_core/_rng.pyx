# Python access to the native RNG, used by tests to check glns.rng.SplitMix64 against it.
from libc.stdint cimport uint64_t
from glns._core._rng cimport rng_next, rng_uniform, rng_below


cdef class CoreRNG:
    """The native SplitMix64 stream, exposed for tests."""
    cdef uint64_t state

    def __init__(self, seed: int):
        self.state = <uint64_t>(seed & 0xFFFFFFFFFFFFFFFF)

    def next_u64(self) -> int:
        return rng_next(&self.state)

    def random(self) -> float:
        return rng_uniform(&self.state)

    def randrange(self, int n) -> int:
        return rng_below(&self.state, n)
