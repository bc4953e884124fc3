# cython: language_level=3
"""The seeded tie draw, shared by ``_score`` (``nth_tie``, ``draw_below``) and ``_cycle``
(``FusedPlan.place``): one definition, inlined.

``Generator.integers(n)`` costs about 2.3 µs of Python and NumPy dispatch per call: at 5,000 nodes
that was a seventh of a compiled cycle (issue 29). ``bounded_below`` draws the same number from the
same bit generator in C, so the stream, and with it every seeded choice, is unchanged.
"""
from libc.stdint cimport int64_t, uint32_t, uint64_t

cdef extern from "numpy/random/bitgen.h":
    ctypedef struct bitgen_t:
        void *state
        uint64_t (*next_uint64)(void *st) noexcept nogil
        uint32_t (*next_uint32)(void *st) noexcept nogil

cdef extern from "Python.h":
    void* PyCapsule_GetPointer(object capsule, const char *name) except? NULL

cdef inline uint64_t max_ties() noexcept nogil:
    """The largest tie count drawn here (NumPy's 32-bit Lemire branch); callers draw larger counts
    through ``Generator.integers`` itself."""
    return 0xFFFFFFFEUL


cdef inline uint64_t bounded_below(bitgen_t* bg, uint64_t n) noexcept nogil:
    """A uniform integer in [0, n) for 1 < n <= 2**32 - 1, as NumPy's ``Generator.integers(n)``
    (int64, ``random_bounded_uint64_fill`` with ``use_masked=False``) draws it: Lemire's method on
    32-bit draws (numpy/random/src/distributions/distributions.c, ``buffered_bounded_lemire_uint32``)."""
    cdef uint32_t rng = <uint32_t>(n - 1)
    cdef uint32_t rng_excl = rng + 1
    cdef uint64_t m = (<uint64_t>bg.next_uint32(bg.state)) * rng_excl
    cdef uint32_t leftover = <uint32_t>(m & 0xFFFFFFFFUL)
    cdef uint32_t threshold
    if leftover < rng_excl:
        threshold = (0xFFFFFFFFUL - rng) % rng_excl
        while leftover < threshold:
            m = (<uint64_t>bg.next_uint32(bg.state)) * rng_excl
            leftover = <uint32_t>(m & 0xFFFFFFFFUL)
    return m >> 32


cdef inline Py_ssize_t nth_equal(const int64_t* totals, Py_ssize_t n, int64_t value, Py_ssize_t k) noexcept nogil:
    """The index of the ``k``-th (0-based) of the first ``n`` totals equal to ``value``; -1 if fewer."""
    cdef Py_ssize_t i, seen = 0
    for i in range(n):
        if totals[i] == value:
            if seen == k:
                return i
            seen += 1
    return -1
