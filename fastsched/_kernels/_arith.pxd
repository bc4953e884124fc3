# cython: language_level=3
"""Upstream's per-node arithmetic, shared by every kernel that needs it (one definition, inlined).

Rows are passed as pointers to the start of a C-contiguous table row, so the functions take no
memoryview references and run without the GIL. Integer division is C's, which truncates toward
zero as Go's does (the kernels are built with ``cdivision``); float operations run in upstream's
order (``-ffp-contract=off`` for the modules that include the float scorers).
"""
from libc.math cimport fabs, round, sqrt
from libc.stdint cimport int64_t, uint8_t

cdef enum:
    MAX_NODE_SCORE = 100
    MAX_UTILIZATION = 100

cdef enum ScorerKind:
    KIND_LEAST_ALLOCATED = 0
    KIND_MOST_ALLOCATED = 1
    KIND_REQUESTED_TO_CAPACITY_RATIO = 2
    KIND_BALANCED = 3

cdef enum NormalizeMode:
    NORMALIZE_NONE = 0
    NORMALIZE_DEFAULT = 1
    NORMALIZE_DEFAULT_REVERSE = 2


cdef inline bint fit_fails(int64_t pod_count, int64_t allowed_pods, const int64_t* alloc_row,
                           const int64_t* requested_row, const int64_t* cols, const int64_t* wants,
                           Py_ssize_t k) noexcept nogil:
    """Whether NodeResourcesFit's Filter rejects the node (any check: pod count or a resource)."""
    cdef Py_ssize_t j
    cdef int64_t c, want
    if pod_count + 1 > allowed_pods:
        return True
    for j in range(k):
        c = cols[j]
        want = wants[j]
        if c < 0:
            if want > 0:
                return True
            continue
        if want > alloc_row[c] - requested_row[c]:
            return True
    return False


cdef inline int64_t fit_failure_mask(int64_t pod_count, int64_t allowed_pods, const int64_t* alloc_row,
                                     const int64_t* requested_row, const int64_t* cols, const int64_t* wants,
                                     Py_ssize_t k, uint8_t* unresolvable) noexcept nogil:
    """NodeResourcesFit's failed checks on one node as a bit mask (0: the node passes): bit 0 "Too
    many pods", bit ``j + 1`` check ``j`` (column ``cols[j]``, -1 when no node has the resource).
    ``unresolvable[0]``: 1 when a failed check asks more than the node's allocatable, or asks a
    resource no node has (upstream's UnschedulableAndUnresolvable), else 0. ``k`` <= 62."""
    cdef Py_ssize_t j
    cdef int64_t c, want, capacity
    cdef int64_t mask = 1 if pod_count + 1 > allowed_pods else 0
    unresolvable[0] = 0
    for j in range(k):
        c = cols[j]
        want = wants[j]
        if c < 0:
            if want > 0:
                mask |= (<int64_t>1) << (j + 1)
                unresolvable[0] = 1
            continue
        capacity = alloc_row[c]
        if want > capacity - requested_row[c]:
            mask |= (<int64_t>1) << (j + 1)
            if want > capacity:
                unresolvable[0] = 1
    return mask


cdef inline Py_ssize_t pattern_index(int64_t* patterns, Py_ssize_t* n_patterns, int64_t mask,
                                     Py_ssize_t max_patterns) noexcept nogil:
    """``mask``'s index among ``patterns[:n_patterns[0]]`` (numbered in order of first appearance),
    appended when new; -1 when it is new and ``max_patterns`` are taken. Failure patterns are few
    in practice (a pod fails on the resources it asks for), so a linear search beats grouping."""
    cdef Py_ssize_t p
    for p in range(n_patterns[0]):
        if patterns[p] == mask:
            return p
    if n_patterns[0] == max_patterns:
        return -1
    p = n_patterns[0]
    patterns[p] = mask
    n_patterns[0] = p + 1
    return p


cdef inline int64_t broken_linear(int64_t p, const int64_t* shape_u, const int64_t* shape_s,
                                  Py_ssize_t m) noexcept nogil:
    """Upstream ``helper.BuildBrokenLinearFunction`` evaluated at ``p`` (``m`` >= 1 points)."""
    cdef Py_ssize_t i
    for i in range(m):
        if p <= shape_u[i]:
            if i == 0:
                return shape_s[0]
            return shape_s[i - 1] + (shape_s[i] - shape_s[i - 1]) * (p - shape_u[i - 1]) // (shape_u[i] - shape_u[i - 1])
    return shape_s[m - 1]


cdef inline int64_t balanced_resource_score(const int64_t* alloc_row, const int64_t* requested_row,
                                            const int64_t* nonzero_row, Py_ssize_t n_res,
                                            const int64_t* alloc_cols, const int64_t* used_cols,
                                            const uint8_t* used_nonzero, const int64_t* pod_requests,
                                            bint with_pod, double* fractions) noexcept nogil:
    """Upstream ``balancedResourceScore`` (balanced_allocation.go, v1.37): ``int64((1 - std) * 100)``
    of the usage fractions ``min(used / allocatable, 1)``, the usage with the pod's requests added
    when ``with_pod`` (the resources that count are the same either way)."""
    cdef Py_ssize_t j, count = 0
    cdef int64_t a, req
    cdef double f, total = 0.0, mean, acc, std
    for j in range(n_res):
        if alloc_cols[j] < 0:
            continue
        a = alloc_row[alloc_cols[j]]
        if a == 0:
            continue
        if used_nonzero[j]:
            req = nonzero_row[used_cols[j]]
        else:
            req = requested_row[used_cols[j]]
        if with_pod:
            req = req + pod_requests[j]
        f = <double> req / <double> a
        if f > 1.0:
            f = 1.0
        total = total + f
        fractions[count] = f
        count += 1
    std = 0.0
    if count == 2:
        std = fabs((fractions[0] - fractions[1]) / 2)
    elif count > 2:
        mean = total / <double> count
        acc = 0.0
        for j in range(count):
            acc = acc + (fractions[j] - mean) * (fractions[j] - mean)
        std = sqrt(acc / <double> count)
    return <int64_t> ((1 - std) * <double> MAX_NODE_SCORE)


cdef inline int64_t resource_score(int kind, const int64_t* alloc_row, const int64_t* requested_row,
                                   const int64_t* nonzero_row, Py_ssize_t n_res, const int64_t* alloc_cols,
                                   const int64_t* used_cols, const uint8_t* used_nonzero,
                                   const int64_t* pod_requests, const int64_t* weights,
                                   const int64_t* shape_u, const int64_t* shape_s, Py_ssize_t m_shape,
                                   double* fractions) noexcept nogil:
    """One node's score by one resource scorer (upstream ``resourceAllocationScorer.score``).

    Per configured resource ``j``: allocatable ``alloc_row[alloc_cols[j]]`` (``alloc_cols[j] < 0``:
    the resource does not count; an allocatable of 0 does not count either), usage
    ``nonzero_row[used_cols[j]]`` when ``used_nonzero[j]`` else ``requested_row[used_cols[j]]``,
    plus ``pod_requests[j]``. ``fractions`` is scratch space for ``n_res`` doubles.
    """
    cdef Py_ssize_t j
    cdef int64_t a, req, s, node_score = 0, weight_sum = 0, p, with_pod, without_pod
    if kind == KIND_BALANCED:
        # Upstream v1.37 ``balancedResourceScorer``: the balance with the pod against the balance
        # without it, brought back to [50, 100] (C's division truncates as Go's does).
        with_pod = balanced_resource_score(alloc_row, requested_row, nonzero_row, n_res, alloc_cols, used_cols,
                                           used_nonzero, pod_requests, True, fractions)
        without_pod = balanced_resource_score(alloc_row, requested_row, nonzero_row, n_res, alloc_cols, used_cols,
                                              used_nonzero, pod_requests, False, fractions)
        return MAX_NODE_SCORE // 2 + (MAX_NODE_SCORE // 2 + with_pod - without_pod) // 2
    for j in range(n_res):
        if alloc_cols[j] < 0:
            continue
        a = alloc_row[alloc_cols[j]]
        if a == 0:
            continue
        if used_nonzero[j]:
            req = nonzero_row[used_cols[j]] + pod_requests[j]
        else:
            req = requested_row[used_cols[j]] + pod_requests[j]
        if kind == KIND_LEAST_ALLOCATED:
            s = 0 if req > a else (a - req) * MAX_NODE_SCORE // a
            node_score += s * weights[j]
            weight_sum += weights[j]
        elif kind == KIND_MOST_ALLOCATED:
            s = (req if req < a else a) * MAX_NODE_SCORE // a
            node_score += s * weights[j]
            weight_sum += weights[j]
        else:
            p = MAX_UTILIZATION if req > a else req * MAX_UTILIZATION // a
            s = broken_linear(p, shape_u, shape_s, m_shape)
            if s > 0:
                node_score += s * weights[j]
                weight_sum += weights[j]
    if weight_sum == 0:
        return 0
    if kind == KIND_REQUESTED_TO_CAPACITY_RATIO:
        return <int64_t> round(<double> node_score / <double> weight_sum)
    return node_score // weight_sum


cdef inline void default_normalize(int64_t* scores, Py_ssize_t n, int64_t max_priority, bint reverse) noexcept nogil:
    """Upstream ``helper.DefaultNormalizeScore`` in place over ``n`` scores."""
    cdef Py_ssize_t i
    cdef int64_t m = 0
    for i in range(n):
        if scores[i] > m:
            m = scores[i]
    if m == 0:
        if reverse:
            for i in range(n):
                scores[i] = max_priority
        return
    for i in range(n):
        scores[i] = max_priority * scores[i] // m
        if reverse:
            scores[i] = max_priority - scores[i]
