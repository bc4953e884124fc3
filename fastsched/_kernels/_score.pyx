# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Score-matrix kernels for RunScorePlugins.

Shapes: ``scores`` and ``weighted`` are (plugins x nodes) int64, C-contiguous; ``weights`` is
(plugins,) int64; ``totals`` is (nodes,) int64. Work is split into chunks of ``chunk_size`` nodes
(the caller passes upstream's Parallelizer chunk size) that run on ``n_threads`` OpenMP threads with
the GIL released.
"""
from cython.parallel cimport prange
from libc.stdint cimport int64_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc

from fastsched._kernels cimport _arith
from fastsched._kernels cimport _tie
from fastsched._kernels._tie cimport PyCapsule_GetPointer, bitgen_t


cdef inline Py_ssize_t _weight_chunk(const int64_t[:, ::1] scores, const int64_t[::1] weights,
                                     int64_t[:, ::1] weighted, int64_t[::1] totals,
                                     Py_ssize_t start, Py_ssize_t end,
                                     int64_t min_score, int64_t max_score,
                                     Py_ssize_t* bad_plugin) noexcept nogil:
    """Weight nodes [start, end); return the first bad node (node order, then plugin order) or -1."""
    cdef Py_ssize_t n_plugins = scores.shape[0]
    cdef Py_ssize_t i, p
    cdef int64_t s, w, total
    for i in range(start, end):
        total = 0
        for p in range(n_plugins):
            s = scores[p, i]
            if s < min_score or s > max_score:
                bad_plugin[0] = p
                return i
            w = s * weights[p]
            weighted[p, i] = w
            total = total + w
        totals[i] = total
    return -1


def weight_and_check(const int64_t[:, ::1] scores, const int64_t[::1] weights,
                     int64_t[:, ::1] weighted, int64_t[::1] totals,
                     Py_ssize_t chunk_size, int n_threads,
                     int64_t min_score, int64_t max_score):
    """Range-check and weight every node's scores, chunk by chunk in parallel.

    A chunk that finds a score outside [min_score, max_score] stops there. In parallel, each
    thread then skips the chunks after the first failing one *it* has met (Cython makes
    ``first_failed``, assigned in the prange body, private to each thread, so there is no
    cancelling across threads: other threads go on with theirs); every chunk before a failing one
    completes, and the lowest failing chunk is chosen after the loop, so the reported score is the
    first one in node order, then plugin order, whatever the thread timing. Returns (-1, -1) when
    all scores are in range, else (node_index, plugin_index) of that first bad score.
    """
    cdef Py_ssize_t n_nodes = scores.shape[1]
    cdef Py_ssize_t n_chunks, k, start, end, bad, best_chunk
    cdef Py_ssize_t first_failed
    cdef Py_ssize_t* bad_node
    cdef Py_ssize_t* bad_plugin
    if n_nodes == 0:
        return -1, -1
    if chunk_size < 1:
        chunk_size = 1
    n_chunks = (n_nodes + chunk_size - 1) // chunk_size
    bad_node = <Py_ssize_t*> malloc(n_chunks * sizeof(Py_ssize_t))
    bad_plugin = <Py_ssize_t*> malloc(n_chunks * sizeof(Py_ssize_t))
    if bad_node == NULL or bad_plugin == NULL:
        free(bad_node)
        free(bad_plugin)
        raise MemoryError()
    first_failed = n_chunks
    try:
        if n_threads <= 1:
            # Same chunks, in order, on this thread: the first failing chunk ends the loop.
            best_chunk = -1
            with nogil:
                for k in range(n_chunks):
                    start = k * chunk_size
                    end = min(start + chunk_size, n_nodes)
                    bad = _weight_chunk(scores, weights, weighted, totals, start, end,
                                        min_score, max_score, &bad_plugin[k])
                    bad_node[k] = bad
                    if bad >= 0:
                        best_chunk = k
                        break
            if best_chunk < 0:
                return -1, -1
            return bad_node[best_chunk], bad_plugin[best_chunk]
        with nogil:
            for k in prange(n_chunks, num_threads=n_threads, schedule="dynamic"):
                bad_node[k] = -1
                # This thread's own first failure (first_failed is thread-private): later
                # chunks here are skipped; the lowest failing chunk overall is chosen below.
                if k > first_failed:
                    continue
                start = k * chunk_size
                end = min(start + chunk_size, n_nodes)
                bad = _weight_chunk(scores, weights, weighted, totals, start, end,
                                    min_score, max_score, &bad_plugin[k])
                bad_node[k] = bad
                if bad >= 0 and k < first_failed:
                    first_failed = k
        best_chunk = -1
        for k in range(n_chunks):
            if bad_node[k] >= 0:
                best_chunk = k
                break
        if best_chunk < 0:
            return -1, -1
        return bad_node[best_chunk], bad_plugin[best_chunk]
    finally:
        free(bad_node)
        free(bad_plugin)


def default_normalize(int64_t[::1] scores, int64_t max_priority, bint reverse):
    """Upstream ``helper.DefaultNormalizeScore`` in place over one plugin's scores (nodes,)."""
    cdef Py_ssize_t n = scores.shape[0]
    if n == 0:
        return
    with nogil:
        _arith.default_normalize(&scores[0], n, max_priority, reverse)


def max_ties(const int64_t[::1] totals):
    """One pass over (N,) int64 ``totals`` (N > 0): (maximum, how many nodes have it, first index)."""
    cdef Py_ssize_t n = totals.shape[0]
    cdef Py_ssize_t i, count = 0, first = -1
    cdef int64_t best = 0, t
    if n == 0:
        raise ValueError("max_ties needs at least one score")
    with nogil:
        best = totals[0]
        count = 1
        first = 0
        for i in range(1, n):
            t = totals[i]
            if t > best:
                best, count, first = t, 1, i
            elif t == best:
                count += 1
    return best, count, first


def nth_equal(const int64_t[::1] totals, int64_t value, Py_ssize_t k):
    """The index of the ``k``-th (0-based) element of ``totals`` equal to ``value``; -1 if fewer."""
    cdef Py_ssize_t n = totals.shape[0]
    cdef Py_ssize_t found = -1
    if n == 0:
        return -1
    with nogil:
        found = _tie.nth_equal(&totals[0], n, value, k)
    return found


# -- the seeded tie draw (_tie.pxd: the same number as ``Generator.integers``, drawn in C) ------
#: the largest tie count nth_tie draws for (NumPy's 32-bit Lemire branch); callers draw larger
#: counts through ``Generator.integers`` itself
MAX_TIES = _tie.max_ties()


def draw_below(object capsule, uint64_t n):
    """``Generator.integers(n)`` for the bit generator behind ``capsule``
    (``rng.bit_generator.capsule``), 1 <= n <= MAX_TIES: the same number, the same state after."""
    if n < 1 or n > MAX_TIES:
        raise ValueError(f"draw_below: n must be in [1, {MAX_TIES}], got {n}")
    if n == 1:
        return 0  # NumPy returns at once for an empty range, drawing nothing
    cdef bitgen_t* bg = <bitgen_t*>PyCapsule_GetPointer(capsule, "BitGenerator")
    return _tie.bounded_below(bg, n)


def nth_tie(const int64_t[::1] totals, Py_ssize_t n, int64_t best, uint64_t ties, object capsule):
    """The index in ``totals[:n]`` of the tie the seeded RNG picks: the ``rng.integers(ties)``-th
    element equal to ``best`` (``ties`` of them, 2 <= ties <= MAX_TIES), drawn from the bit
    generator behind ``capsule`` exactly as ``Generator.integers`` draws it; -1 if fewer ties."""
    if ties < 2 or ties > MAX_TIES:
        raise ValueError(f"nth_tie: ties must be in [2, {MAX_TIES}], got {ties}")
    if n < 0 or n > totals.shape[0]:
        raise ValueError(f"nth_tie: n must be in [0, {totals.shape[0]}], got {n}")
    cdef bitgen_t* bg = <bitgen_t*>PyCapsule_GetPointer(capsule, "BitGenerator")
    cdef Py_ssize_t found = -1
    cdef Py_ssize_t k
    with nogil:
        k = <Py_ssize_t>_tie.bounded_below(bg, ties)
        if n > 0:
            found = _tie.nth_equal(&totals[0], n, best, k)
    return found
