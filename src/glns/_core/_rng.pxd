# SplitMix64: small, fast, seedable, and trivial to mirror exactly in Python
# (glns.rng.SplitMix64), which lets plain-Python twins replay native runs bit for bit.
from libc.stdint cimport uint64_t

cdef inline uint64_t rng_next(uint64_t *state) noexcept nogil:
    state[0] += <uint64_t>0x9E3779B97F4A7C15ULL
    cdef uint64_t z = state[0]
    z = (z ^ (z >> 30)) * <uint64_t>0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * <uint64_t>0x94D049BB133111EBULL
    return z ^ (z >> 31)

cdef inline double rng_uniform(uint64_t *state) noexcept nogil:
    """Uniform double in [0, 1) with 53 random bits."""
    return <double>(rng_next(state) >> 11) * (1.0 / 9007199254740992.0)

cdef inline int rng_below(uint64_t *state, int n) noexcept nogil:
    """Integer in [0, n) by multiply-shift of the high 32 bits (n < 2**31)."""
    return <int>(((rng_next(state) >> 32) * <uint64_t>n) >> 32)

cdef inline uint64_t rng_after(uint64_t state, uint64_t draws) noexcept nogil:
    """The state after `draws` more draws (any of the above takes one): the state only counts,
    so a caller may make draws out of order and still leave the stream where the in-order
    draws would have."""
    return state + draws * <uint64_t>0x9E3779B97F4A7C15ULL
