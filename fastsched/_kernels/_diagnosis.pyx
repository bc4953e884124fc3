# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The Filter diagnosis of a pod that fits nowhere, in one pass (issue 29, docs/dev/failing-cycle.md).

:func:`merge_fit` walks the nodes of an attempt in its order and writes each node's Filter status
as upstream's RunFilterPlugins leaves it for the node-only Filters (a compiled plan's per-row
arrays: the first rejecting plugin's profile position, code and reason id) and the resource Filter
(NodeResourcesFit's checks on the live columns, as ``_resources.fit_filter_verdicts``): a row's
status is its first rejecting plugin's by profile position, since RunFilterPlugins stops there.
The per-cycle (CYCLE-form) Filters are merged by the caller afterwards, over the rows this leaves
pending. It replaces, for such a pod, the node-only arrays' gather, the resource Filter's kernel
call on the pending rows and the NumPy merge (``CompiledCycle.diagnose``).
"""
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t

import numpy as np

from fastsched._kernels._arith cimport fit_failure_mask, pattern_index

cdef enum:
    _MAX_PATTERNS = 64
    _MERGE_TOO_MANY = -1
    _MERGE_FOUND = -2

#: :func:`merge_fit`'s answers other than a pattern count: more than MAX_PATTERNS failure masks or
#: more than 62 checks; a counted row passes both (the pod fits there: the caller declines)
MERGE_TOO_MANY = _MERGE_TOO_MANY
MERGE_FOUND = _MERGE_FOUND
#: most distinct failure patterns :func:`merge_fit` numbers (as ``_resources.MAX_PATTERNS``)
MAX_PATTERNS = _MAX_PATTERNS


def merge_fit(const int64_t[::1] rows, const int16_t[::1] first, const int8_t[::1] static_code,
              const int32_t[::1] static_rid, Py_ssize_t fit_pos,
              const int64_t[::1] pod_count, const int64_t[::1] allowed_pods,
              const int64_t[:, ::1] alloc, const int64_t[:, ::1] requested,
              const int64_t[::1] cols, const int64_t[::1] wants,
              int8_t code_unschedulable, int8_t code_unresolvable, int32_t fit_rid0,
              const uint8_t[::1] counted, int16_t[::1] pid, int8_t[::1] code, int32_t[::1] rid,
              int64_t[::1] patterns):
    """Position ``i``'s status (node ``rows[i]``) into ``pid[i]`` (the rejecting plugin's profile
    position, -1 when none), ``code[i]`` (0 when none) and ``rid[i]`` (its reason tuple's id, -1
    when none).

    ``first`` / ``static_code`` / ``static_rid``: (C,) the node-only Filters' first rejection per
    row (``first`` -1: none). ``fit_pos``: the resource Filter's profile position; its checks are
    ``cols`` / ``wants`` (column -1: no node has the resource) on ``pod_count`` / ``allowed_pods``
    / ``alloc`` / ``requested`` (the table's, or a shadow's with nominated pods added). A row fails
    them with the mask of its failed checks (bit 0 "Too many pods", bit ``j + 1`` check ``j``),
    Unresolvable when a check asks more than the node's allocatable (or of a resource no node has),
    else Unschedulable; its reason id is ``fit_rid0`` plus the mask's index in ``patterns``
    (numbered in order of first appearance). A node-only rejection at a position before
    ``fit_pos`` wins without reading the resource columns; after it, only when the resource checks
    pass.

    ``counted``: (C,) uint8 or None (every row counts): a counted row that passes both stops the
    pass (MERGE_FOUND; the outputs are then partial); a row not counted (a nominated node, judged
    on the shadow) is left passing for the caller. Returns the number of patterns, MERGE_FOUND, or
    MERGE_TOO_MANY (more than MAX_PATTERNS masks or more than 62 checks: the outputs are partial).
    """
    cdef Py_ssize_t n = rows.shape[0]
    cdef Py_ssize_t k = cols.shape[0]
    cdef Py_ssize_t i, p, n_patterns = 0, answer = 0
    cdef int64_t r, mask
    cdef int16_t s
    cdef uint8_t unres
    cdef bint has_counted = counted is not None
    cdef Py_ssize_t capacity_rows = first.shape[0]
    if pid.shape[0] < n or code.shape[0] < n or rid.shape[0] < n:
        raise ValueError(f"pid, code and rid need {n} entries")
    if static_code.shape[0] != capacity_rows or static_rid.shape[0] != capacity_rows:
        raise ValueError("first, static_code and static_rid need one entry per table row")
    if has_counted and counted.shape[0] < capacity_rows:
        raise ValueError("counted needs one entry per table row")
    if wants.shape[0] != k:
        raise ValueError("cols and wants differ in length")
    if patterns.shape[0] < _MAX_PATTERNS:
        raise ValueError(f"patterns must hold {MAX_PATTERNS} masks")
    if k + 1 > 62:
        return _MERGE_TOO_MANY
    with nogil:
        for i in range(n):
            r = rows[i]
            s = first[r]
            if s >= 0 and s < fit_pos:
                pid[i] = s
                code[i] = static_code[r]
                rid[i] = static_rid[r]
                continue
            mask = fit_failure_mask(pod_count[r], allowed_pods[r], &alloc[r, 0], &requested[r, 0], &cols[0],
                                    &wants[0], k, &unres)
            if mask == 0:
                if s >= 0:
                    pid[i] = s
                    code[i] = static_code[r]
                    rid[i] = static_rid[r]
                    continue
                if not has_counted or counted[r]:
                    answer = _MERGE_FOUND
                    break
                pid[i] = -1
                code[i] = 0
                rid[i] = -1
                continue
            p = pattern_index(&patterns[0], &n_patterns, mask, _MAX_PATTERNS)
            if p < 0:
                answer = _MERGE_TOO_MANY
                break
            pid[i] = fit_pos
            code[i] = code_unresolvable if unres else code_unschedulable
            rid[i] = fit_rid0 + <int32_t>p
    return answer if answer < 0 else n_patterns


def id_counts(const int32_t[:] ids, const int64_t[:] positions, Py_ssize_t n_ids):
    """``[(k, c), ...]``: each id ``k`` in ``0 <= k < n_ids`` that ``ids`` holds ``c > 0`` times at
    ``positions`` (every position when None), in increasing ``k``; negative ids (feasible nodes)
    are not counted. The FitError histogram's count per reason tuple (``FilterResults.reason_counts``:
    ``np.bincount`` over the gathered ids, then ``flatnonzero``) in one pass. None when a position
    is outside ``ids`` or an id is ``n_ids`` or more (the caller's NumPy form then answers)."""
    cdef Py_ssize_t n = ids.shape[0]
    cdef Py_ssize_t m = n if positions is None else positions.shape[0]
    cdef Py_ssize_t i, k
    cdef int64_t p
    cdef int32_t r
    cdef bint bad = False
    cdef bint every = positions is None
    cdef int64_t[::1] counts = np.zeros(n_ids if n_ids > 0 else 1, dtype=np.int64)
    with nogil:
        for i in range(m):
            if every:
                p = i
            else:
                p = positions[i]
                if p < 0 or p >= n:
                    bad = True
                    break
            r = ids[p]
            if r < 0:
                continue
            if r >= n_ids:
                bad = True
                break
            counts[r] += 1
    if bad:
        return None
    return [(k, counts[k]) for k in range(n_ids) if counts[k]]
