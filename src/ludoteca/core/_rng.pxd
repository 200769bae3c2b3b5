# The random number generator of every compiled engine and of the compiled search, shared with
# ``cimport`` (a declarations file of inline functions: nothing is imported at run time):
#
#     from ludoteca.core._rng cimport _next, _below
#
# SplitMix64 (Steele, Lea & Flood 2014).
# Fast, 64-bit state, passes BigCrush; a seed fixes the whole run. A draw in [0, m) is Lemire's
# multiply-shift of the high 32 bits (bias below m / 2**32).

from libc.stdint cimport uint64_t


cdef inline uint64_t _next(uint64_t* s) noexcept nogil:
    s[0] += <uint64_t>0x9E3779B97F4A7C15
    cdef uint64_t z = s[0]
    z = (z ^ (z >> 30)) * <uint64_t>0xBF58476D1CE4E5B9
    z = (z ^ (z >> 27)) * <uint64_t>0x94D049BB133111EB
    return z ^ (z >> 31)


cdef inline int _below(uint64_t* s, int m) noexcept nogil:
    return <int>(((_next(s) >> 32) * <uint64_t>m) >> 32)
