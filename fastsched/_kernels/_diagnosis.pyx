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
cimport numpy as cnp

import numpy as np

from fastsched._kernels._arith cimport fit_failure_mask, pattern_index
from fastsched._kernels._arrays cimport matrix, stride_of_dim, vector

cnp.import_array()

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


def merge_fit(rows_, first_, static_code_, static_rid_, Py_ssize_t fit_pos, pod_count_, allowed_pods_,
              alloc_, requested_, cols_, wants_, int8_t code_unschedulable, int8_t code_unresolvable,
              int32_t fit_rid0, counted_, pid_, code_, rid_, patterns_, row_version_=None, cache_version_=None,
              cache_mask_=None):
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

    ``row_version`` / ``cache_version`` / ``cache_mask``: (C,) int64 or all None (no cache). The
    resource checks' mask of a row judged on the table's own columns (a counted row), kept across
    calls: ``cache_mask[r]`` holds row ``r``'s mask with bit 62 set when Unresolvable, valid while
    ``cache_version[r]`` equals the table's ``row_version[r]`` (which moves whenever the row's
    allocatable, requests or pod count change). The caller keeps one cache per table and checks
    (``cols``, ``wants``) and resets it (``cache_version`` -1) when either changes; a row not
    counted is judged on the shadow and neither reads nor writes it.
    """
    # The arrays are checked as the typed memoryviews this kernel took were (dtype, native order,
    # 1-d C-contiguous; alloc and requested 2-d with contiguous rows) without a buffer acquisition
    # each (~1.3k instructions apiece, 18 a call: issue 29), and read through their data pointers.
    # rows (n,) int64; first int16, static_code int8, static_rid int32, pod_count, allowed_pods
    # int64: (C,); alloc, requested (C, R) int64; cols, wants (K,) int64; counted (C,) uint8 or
    # None; pid int16, code int8, rid int32: (>= n,), written; patterns (>= MAX_PATTERNS,) int64.
    cdef cnp.ndarray a_rows = vector(rows_, cnp.NPY_INT64, False, True, "merge_fit rows")
    cdef cnp.ndarray a_first = vector(first_, cnp.NPY_INT16, False, True, "merge_fit first")
    cdef cnp.ndarray a_static_code = vector(static_code_, cnp.NPY_INT8, False, True, "merge_fit static_code")
    cdef cnp.ndarray a_static_rid = vector(static_rid_, cnp.NPY_INT32, False, True, "merge_fit static_rid")
    cdef cnp.ndarray a_pod_count = vector(pod_count_, cnp.NPY_INT64, False, True, "merge_fit pod_count")
    cdef cnp.ndarray a_allowed = vector(allowed_pods_, cnp.NPY_INT64, False, True, "merge_fit allowed_pods")
    cdef cnp.ndarray a_alloc = matrix(alloc_, cnp.NPY_INT64, False, True, "merge_fit alloc")
    cdef cnp.ndarray a_requested = matrix(requested_, cnp.NPY_INT64, False, True, "merge_fit requested")
    cdef cnp.ndarray a_cols = vector(cols_, cnp.NPY_INT64, False, True, "merge_fit cols")
    cdef cnp.ndarray a_wants = vector(wants_, cnp.NPY_INT64, False, True, "merge_fit wants")
    cdef bint has_counted = counted_ is not None
    cdef cnp.ndarray a_counted = (vector(counted_, cnp.NPY_UINT8, False, True, "merge_fit counted")
                                  if has_counted else None)
    cdef cnp.ndarray a_pid = vector(pid_, cnp.NPY_INT16, True, True, "merge_fit pid")
    cdef cnp.ndarray a_code = vector(code_, cnp.NPY_INT8, True, True, "merge_fit code")
    cdef cnp.ndarray a_rid = vector(rid_, cnp.NPY_INT32, True, True, "merge_fit rid")
    cdef cnp.ndarray a_patterns = vector(patterns_, cnp.NPY_INT64, True, True, "merge_fit patterns")
    cdef const int64_t* rows = <const int64_t*>cnp.PyArray_DATA(a_rows)
    cdef const int16_t* first = <const int16_t*>cnp.PyArray_DATA(a_first)
    cdef const int8_t* static_code = <const int8_t*>cnp.PyArray_DATA(a_static_code)
    cdef const int32_t* static_rid = <const int32_t*>cnp.PyArray_DATA(a_static_rid)
    cdef const int64_t* pod_count = <const int64_t*>cnp.PyArray_DATA(a_pod_count)
    cdef const int64_t* allowed_pods = <const int64_t*>cnp.PyArray_DATA(a_allowed)
    cdef const int64_t* alloc = <const int64_t*>cnp.PyArray_DATA(a_alloc)
    cdef const int64_t* requested = <const int64_t*>cnp.PyArray_DATA(a_requested)
    cdef const int64_t* cols = <const int64_t*>cnp.PyArray_DATA(a_cols)
    cdef const int64_t* wants = <const int64_t*>cnp.PyArray_DATA(a_wants)
    cdef const uint8_t* counted = <const uint8_t*>cnp.PyArray_DATA(a_counted) if has_counted else NULL
    cdef int16_t* pid = <int16_t*>cnp.PyArray_DATA(a_pid)
    cdef int8_t* code = <int8_t*>cnp.PyArray_DATA(a_code)
    cdef int32_t* rid = <int32_t*>cnp.PyArray_DATA(a_rid)
    cdef int64_t* patterns = <int64_t*>cnp.PyArray_DATA(a_patterns)
    cdef bint cached = cache_mask_ is not None
    cdef cnp.ndarray a_row_version = (vector(row_version_, cnp.NPY_INT64, False, True, "merge_fit row_version")
                                      if cached else None)
    cdef cnp.ndarray a_cache_version = (vector(cache_version_, cnp.NPY_INT64, True, True, "merge_fit cache_version")
                                        if cached else None)
    cdef cnp.ndarray a_cache_mask = (vector(cache_mask_, cnp.NPY_INT64, True, True, "merge_fit cache_mask")
                                     if cached else None)
    cdef const int64_t* row_version = <const int64_t*>cnp.PyArray_DATA(a_row_version) if cached else NULL
    cdef int64_t* cache_version = <int64_t*>cnp.PyArray_DATA(a_cache_version) if cached else NULL
    cdef int64_t* cache_mask = <int64_t*>cnp.PyArray_DATA(a_cache_mask) if cached else NULL
    cdef int64_t unres_bit = (<int64_t>1) << 62
    cdef bint own_row
    cdef Py_ssize_t alloc_s0 = stride_of_dim(a_alloc, 0), requested_s0 = stride_of_dim(a_requested, 0)
    cdef Py_ssize_t n = cnp.PyArray_DIM(a_rows, 0)
    cdef Py_ssize_t k = cnp.PyArray_DIM(a_cols, 0)
    cdef Py_ssize_t i, p, n_patterns = 0, answer = 0
    cdef int64_t r, mask
    cdef int16_t s
    cdef uint8_t unres
    cdef Py_ssize_t capacity_rows = cnp.PyArray_DIM(a_first, 0)
    if cnp.PyArray_DIM(a_pid, 0) < n or cnp.PyArray_DIM(a_code, 0) < n or cnp.PyArray_DIM(a_rid, 0) < n:
        raise ValueError(f"pid, code and rid need {n} entries")
    if cnp.PyArray_DIM(a_static_code, 0) != capacity_rows or cnp.PyArray_DIM(a_static_rid, 0) != capacity_rows:
        raise ValueError("first, static_code and static_rid need one entry per table row")
    if has_counted and cnp.PyArray_DIM(a_counted, 0) < capacity_rows:
        raise ValueError("counted needs one entry per table row")
    if cnp.PyArray_DIM(a_wants, 0) != k:
        raise ValueError("cols and wants differ in length")
    if cnp.PyArray_DIM(a_patterns, 0) < _MAX_PATTERNS:
        raise ValueError(f"patterns must hold {MAX_PATTERNS} masks")
    if cached and (cnp.PyArray_DIM(a_row_version, 0) < capacity_rows or cnp.PyArray_DIM(a_cache_version, 0) < capacity_rows
                   or cnp.PyArray_DIM(a_cache_mask, 0) < capacity_rows):
        raise ValueError("row_version, cache_version and cache_mask need one entry per table row")
    if (row_version_ is None) != (not cached) or (cache_version_ is None) != (not cached):
        raise ValueError("row_version, cache_version and cache_mask are given together")
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
            own_row = cached and (not has_counted or counted[r])
            if own_row and cache_version[r] == row_version[r]:
                mask = cache_mask[r]
                unres = (mask & unres_bit) != 0
                mask &= ~unres_bit
            else:
                mask = fit_failure_mask(pod_count[r], allowed_pods[r], alloc + r * alloc_s0,
                                        requested + r * requested_s0, cols, wants, k, &unres)
                if own_row:
                    cache_version[r] = row_version[r]
                    cache_mask[r] = mask | (unres_bit if unres else 0)
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
            p = pattern_index(patterns, &n_patterns, mask, _MAX_PATTERNS)
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


def plugin_sets(plugin_ids_, codes_, positions_, Py_ssize_t n_plugins, int8_t pending_code):
    """``(rejecting, pending)``: the plugin ids in ``0 <= k < n_plugins`` that ``plugin_ids`` holds
    at ``positions`` (every position when None) where ``codes`` is not ``pending_code``, and those
    it holds where it is, each a list in increasing id; negative ids (feasible nodes) are not
    counted. A failing cycle's UnschedulablePlugins and PendingPlugins
    (``FilterResults.rejecting_plugins``: the codes' gather, the Pending test, then for each part
    the ids' gather, ``np.bincount`` and ``flatnonzero``) in one pass. None when a position is
    outside the arrays or an id is ``n_plugins`` or more (the caller's NumPy form then answers).

    ``plugin_ids`` (n,) int16, ``codes`` (n,) int8, ``positions`` (m,) int64 or None."""
    cdef cnp.ndarray a_ids = vector(plugin_ids_, cnp.NPY_INT16, False, True, "plugin_sets plugin_ids")
    cdef cnp.ndarray a_codes = vector(codes_, cnp.NPY_INT8, False, True, "plugin_sets codes")
    cdef bint every = positions_ is None
    cdef cnp.ndarray a_pos = None if every else vector(positions_, cnp.NPY_INT64, False, True,
                                                        "plugin_sets positions")
    cdef const int16_t* ids = <const int16_t*>cnp.PyArray_DATA(a_ids)
    cdef const int8_t* codes = <const int8_t*>cnp.PyArray_DATA(a_codes)
    cdef const int64_t* pos = NULL if every else <const int64_t*>cnp.PyArray_DATA(a_pos)
    cdef Py_ssize_t n = cnp.PyArray_DIM(a_ids, 0)
    cdef Py_ssize_t m = n if every else cnp.PyArray_DIM(a_pos, 0)
    cdef Py_ssize_t i, k
    cdef int64_t p
    cdef int16_t r
    cdef bint bad = False
    if cnp.PyArray_DIM(a_codes, 0) != n:
        raise ValueError("plugin_ids and codes differ in length")
    if n_plugins < 0 or n_plugins > 32767:
        return None
    # seen[k]: bit 0 a rejection by plugin k that is not Pending, bit 1 a Pending one
    cdef cnp.ndarray a_seen = np.zeros(n_plugins if n_plugins > 0 else 1, dtype=np.uint8)
    cdef uint8_t* seen = <uint8_t*>cnp.PyArray_DATA(a_seen)
    with nogil:
        for i in range(m):
            if every:
                p = i
            else:
                p = pos[i]
                if p < 0 or p >= n:
                    bad = True
                    break
            r = ids[p]
            if r < 0:
                continue
            if r >= n_plugins:
                bad = True
                break
            seen[r] |= 2 if codes[p] == pending_code else 1
    if bad:
        return None
    return [k for k in range(n_plugins) if seen[k] & 1], [k for k in range(n_plugins) if seen[k] & 2]


def rows_with_code(rows_, codes_, positions_, int8_t code):
    """``rows[positions[i]]`` for each ``i`` whose ``codes[positions[i]]`` is ``code``, in order
    ((q,) int64): ``ArrayNodeToStatus.rows_for_status_code``'s gather, test, selection and gather
    in one pass. None when a position is outside the arrays (the caller's NumPy form then answers
    or raises). ``rows`` (n,) int64, ``codes`` (n,) int8, ``positions`` (m,) int64."""
    cdef cnp.ndarray a_rows = vector(rows_, cnp.NPY_INT64, False, True, "rows_with_code rows")
    cdef cnp.ndarray a_codes = vector(codes_, cnp.NPY_INT8, False, True, "rows_with_code codes")
    cdef cnp.ndarray a_pos = vector(positions_, cnp.NPY_INT64, False, True, "rows_with_code positions")
    cdef const int64_t* rows = <const int64_t*>cnp.PyArray_DATA(a_rows)
    cdef const int8_t* codes = <const int8_t*>cnp.PyArray_DATA(a_codes)
    cdef const int64_t* pos = <const int64_t*>cnp.PyArray_DATA(a_pos)
    cdef Py_ssize_t n = cnp.PyArray_DIM(a_rows, 0)
    cdef Py_ssize_t nc = cnp.PyArray_DIM(a_codes, 0)
    cdef Py_ssize_t m = cnp.PyArray_DIM(a_pos, 0)
    cdef Py_ssize_t i, q = 0
    cdef int64_t p
    cdef bint bad = False
    cdef cnp.ndarray a_out = np.empty(m, dtype=np.int64)
    cdef int64_t* out = <int64_t*>cnp.PyArray_DATA(a_out)
    with nogil:
        for i in range(m):
            p = pos[i]
            if p < 0 or p >= n or p >= nc:
                bad = True
                break
            if codes[p] == code:
                out[q] = rows[p]
                q += 1
    if bad:
        return None
    return a_out[:q]
