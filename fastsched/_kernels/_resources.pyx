# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Kernels of the node-resources plugins: NodeResourcesFit's Filter and the resource scorers.

Both read the node table's columns directly at the candidate ``rows`` (int64, shape (N,)):
``alloc`` and ``requested`` are (C, R) int64 and ``nonzero`` is (C, 2) int64 (cpu, memory with the
non-zero defaults), all C-contiguous. One pass per node, no temporaries, the GIL released.

Arithmetic is Go's: C's int64 division truncates toward zero as Go's does, and the float64
operations run in upstream's order (the module is built with ``-ffp-contract=off`` so no fused
multiply-add changes a rounding), so results equal the one-node Python path bit for bit.
"""
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t
from libc.stdlib cimport free, malloc

from fastsched._kernels._arith cimport (KIND_BALANCED, KIND_LEAST_ALLOCATED, KIND_MOST_ALLOCATED,
                                        KIND_REQUESTED_TO_CAPACITY_RATIO, fit_failure_mask, pattern_index,
                                        resource_score)

#: Scorer kinds understood by :func:`resource_scores`.
LEAST_ALLOCATED = KIND_LEAST_ALLOCATED
MOST_ALLOCATED = KIND_MOST_ALLOCATED
REQUESTED_TO_CAPACITY_RATIO = KIND_REQUESTED_TO_CAPACITY_RATIO
BALANCED = KIND_BALANCED


def fit_filter(const int64_t[::1] pod_count, const int64_t[::1] allowed_pods,
               const int64_t[:, ::1] alloc, const int64_t[:, ::1] requested,
               const int64_t[::1] rows, const int64_t[::1] cols, const int64_t[::1] wants,
               uint8_t[:, ::1] failed, uint8_t[::1] unresolvable):
    """NodeResourcesFit's Filter over ``rows``: returns the number of nodes that fail.

    ``failed`` is (N, 1 + K): column 0 is "Too many pods", column ``j + 1`` resource check ``j``
    (table column ``cols[j]``, -1 when no node has the resource; amount ``wants[j]``).
    ``unresolvable[i]`` is set when a failing check asks for more than the node's allocatable.
    """
    cdef Py_ssize_t n = rows.shape[0]
    cdef Py_ssize_t k = cols.shape[0]
    cdef Py_ssize_t i, j, n_failed = 0
    cdef int64_t r, c, want, capacity
    cdef uint8_t any_failed, unres
    if failed.shape[0] != n or failed.shape[1] != k + 1:
        raise ValueError(f"failed has shape ({failed.shape[0]}, {failed.shape[1]}), want ({n}, {k + 1})")
    with nogil:
        for i in range(n):
            r = rows[i]
            unres = 0
            any_failed = pod_count[r] + 1 > allowed_pods[r]
            failed[i, 0] = any_failed
            for j in range(k):
                c = cols[j]
                want = wants[j]
                if c < 0:
                    failed[i, j + 1] = want > 0
                    if want > 0:
                        any_failed = 1
                        unres = 1
                    continue
                capacity = alloc[r, c]
                if want > capacity - requested[r, c]:
                    failed[i, j + 1] = 1
                    any_failed = 1
                    if want > capacity:
                        unres = 1
                else:
                    failed[i, j + 1] = 0
            unresolvable[i] = unres
            n_failed += any_failed
    return n_failed



cdef enum:
    _MAX_PATTERNS = 64
#: most distinct failure patterns :func:`fit_filter_verdicts` numbers (more: it returns -1)
MAX_PATTERNS = _MAX_PATTERNS


def fit_filter_verdicts(const int64_t[::1] pod_count, const int64_t[::1] allowed_pods,
                        const int64_t[:, ::1] alloc, const int64_t[:, ::1] requested,
                        const int64_t[::1] rows, const int64_t[::1] cols, const int64_t[::1] wants,
                        int8_t code_unschedulable, int8_t code_unresolvable,
                        int8_t[::1] codes, int32_t[::1] reason_ids, int64_t[::1] patterns):
    """NodeResourcesFit's Filter over ``rows`` as verdicts: the checks of :func:`fit_filter`, with
    each failing node's checks as a bit mask (bit 0 "Too many pods", bit ``j + 1`` check ``j``).

    Writes ``codes`` (N,) int8 (0, ``code_unschedulable`` or ``code_unresolvable``) and
    ``reason_ids`` (N,) int32 (-1 for passing nodes, else the index into ``patterns`` of the node's
    mask, numbered in order of first appearance). ``patterns`` (at least :data:`MAX_PATTERNS`)
    receives the distinct masks. Returns the number of distinct masks (0: every node passes), or -1
    when there are more than :data:`MAX_PATTERNS` of them or more than 62 checks (the caller then
    uses :func:`fit_filter`). Failure patterns are few in practice (a pod fails on the resources
    it asks for), so a linear search over the ones seen beats building the (N, 1 + K) matrix and
    grouping its rows in NumPy: this is the whole Filter of a pod that fits nowhere.
    """
    cdef Py_ssize_t n = rows.shape[0]
    cdef Py_ssize_t k = cols.shape[0]
    cdef Py_ssize_t i, p, n_patterns = 0
    cdef int64_t r, mask
    cdef uint8_t unres
    if codes.shape[0] != n or reason_ids.shape[0] != n:
        raise ValueError(f"codes and reason_ids must have {n} entries")
    if patterns.shape[0] < _MAX_PATTERNS:
        raise ValueError(f"patterns must hold {MAX_PATTERNS} masks")
    if k + 1 > 62:
        return -1
    with nogil:
        for i in range(n):
            r = rows[i]
            mask = fit_failure_mask(pod_count[r], allowed_pods[r], &alloc[r, 0], &requested[r, 0], &cols[0],
                                    &wants[0], k, &unres)
            if mask == 0:
                codes[i] = 0
                reason_ids[i] = -1
                continue
            codes[i] = code_unresolvable if unres else code_unschedulable
            p = pattern_index(&patterns[0], &n_patterns, mask, _MAX_PATTERNS)
            if p < 0:
                n_patterns = -1
                break
            reason_ids[i] = <int32_t>p
    return n_patterns


def resource_scores(const int64_t[:, ::1] alloc, const int64_t[:, ::1] requested,
                    const int64_t[:, ::1] nonzero, const int64_t[::1] rows,
                    const int64_t[::1] alloc_cols, const int64_t[::1] used_cols,
                    const uint8_t[::1] used_nonzero, const int64_t[::1] pod_requests,
                    const int64_t[::1] weights, int kind,
                    const int64_t[::1] shape_u, const int64_t[::1] shape_s, int64_t[::1] out):
    """Score every node in ``rows`` with one resource scorer; writes ``out`` (N,) int64.

    Per configured resource ``j`` (the args' order): the allocatable is ``alloc[row, alloc_cols[j]]``
    (``alloc_cols[j] < 0``: the resource does not count), the usage is ``nonzero[row, used_cols[j]]``
    when ``used_nonzero[j]`` else ``requested[row, used_cols[j]]``, plus ``pod_requests[j]``. A
    resource whose allocatable is 0 does not count. ``kind`` picks the scorer (module constants);
    ``shape_u`` / ``shape_s`` are the RequestedToCapacityRatio shape (already scaled to 0-100).
    The arithmetic is ``_arith.resource_score``, shared with the fused cycle kernel.
    """
    cdef Py_ssize_t n = rows.shape[0]
    cdef Py_ssize_t n_res = alloc_cols.shape[0]
    cdef Py_ssize_t m_shape = shape_u.shape[0]
    cdef Py_ssize_t i
    cdef int64_t r
    cdef double* fractions
    cdef const int64_t* no_shape = NULL
    if kind == KIND_REQUESTED_TO_CAPACITY_RATIO and m_shape == 0:
        raise ValueError("RequestedToCapacityRatio needs at least one shape point")
    if n == 0 or n_res == 0:
        for i in range(n):
            out[i] = 0
        return
    fractions = <double*> malloc(n_res * sizeof(double))
    if fractions == NULL:
        raise MemoryError()
    try:
        with nogil:
            for i in range(n):
                r = rows[i]
                out[i] = resource_score(kind, &alloc[r, 0], &requested[r, 0], &nonzero[r, 0], n_res,
                                        &alloc_cols[0], &used_cols[0], &used_nonzero[0], &pod_requests[0],
                                        &weights[0], &shape_u[0] if m_shape else no_shape,
                                        &shape_s[0] if m_shape else no_shape, m_shape, fractions)
    finally:
        free(fractions)
