# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Kernels of DefaultPreemption's vectorized dry run (upstream ``SelectVictimsOnNode``, v1.34).

The dry run keeps the bound pods as columns in a *pool* (``prio`` int64, ``start`` float64 with
+inf for a pod that has not started, ``req`` (P, R) int64 effective requests); each node's pods are
one contiguous range of pool entries in the node's pod-list order, so an entry index orders the
pods of a node as upstream's NodeInfo does (the order ``GetVictimsOnNode`` makes their victims in).

:func:`window_usage` collects the preemptor's potential victims (priority below its own) node by
node, with what each node holds without them; :func:`select_victims` then runs, for every node at once, what upstream does for one:
sort by ``MoreImportantVictim`` as Go's ``sort.Slice`` does (:func:`_go_sort`: pdqsort, not
stable), split by PodDisruptionBudget (``FilterVictimsWithPDBViolation``'s running counts), reprieve
the PDB-violating pods first and then the others, each kept when the node still fits the preemptor
with it (NodeResourcesFit's checks and NodePorts' conflicts, the pod-dependent filters that have
this additive form), and order the victims as upstream's final re-sort does.
"""
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint64_t
from cpython.object cimport PyObject
from libc.stdlib cimport free, malloc
cimport numpy as cnp
from fastsched._kernels._arrays cimport matrix, stride_of, stride_of_dim, vector

import numpy as np

cnp.import_array()

#: Upstream adds MaxInt32 + 1 to each victim's priority before summing (pickOneNodeForPreemption).
cdef int64_t PRIORITY_OFFSET = 2147483648


def window_usage(rows_, row_start_, row_count_, prio_, int64_t priority, req_, requested_, pod_count_,
                 seg_, used_, count_):
    """The preemptor's potential victims on each window node and what the node holds without them.

    Node ``w`` (table row ``rows[w]``) has the pool entries ``row_start[r]`` to ``row_start[r] +
    row_count[r]``; those with priority below ``priority`` (IsEligiblePod's default) go to
    ``entries[seg[w]:seg[w + 1]]`` in entry order. ``used[w]`` is the row's ``requested`` less
    their requests, ``count[w]`` its ``pod_count`` less their number (the nominated pods are
    added by the caller). Returns ``entries`` (int64, ``seg[W]`` of them).

    ``seg`` is (W + 1,), ``used`` is (W, R).
    """
    # checked as the typed memoryviews it took were (dtype, native order, 1-d C-contiguous; req and
    # used 2-d with contiguous rows, requested any strides), without a buffer acquisition each
    cdef cnp.ndarray a_rows = vector(rows_, cnp.NPY_INT64, False, True, "window_usage rows")
    cdef cnp.ndarray a_row_start = vector(row_start_, cnp.NPY_INT64, False, True, "window_usage row_start")
    cdef cnp.ndarray a_row_count = vector(row_count_, cnp.NPY_INT64, False, True, "window_usage row_count")
    cdef cnp.ndarray a_prio = vector(prio_, cnp.NPY_INT64, False, True, "window_usage prio")
    cdef cnp.ndarray a_req = matrix(req_, cnp.NPY_INT64, False, True, "window_usage req")
    cdef cnp.ndarray a_requested = matrix(requested_, cnp.NPY_INT64, False, False, "window_usage requested")
    cdef cnp.ndarray a_pod_count = vector(pod_count_, cnp.NPY_INT64, False, True, "window_usage pod_count")
    cdef cnp.ndarray a_seg = vector(seg_, cnp.NPY_INT64, True, True, "window_usage seg")
    cdef cnp.ndarray a_used = matrix(used_, cnp.NPY_INT64, True, True, "window_usage used")
    cdef cnp.ndarray a_count = vector(count_, cnp.NPY_INT64, True, True, "window_usage count")
    cdef const int64_t* rows = <const int64_t*>cnp.PyArray_DATA(a_rows)
    cdef const int64_t* row_start = <const int64_t*>cnp.PyArray_DATA(a_row_start)
    cdef const int64_t* row_count = <const int64_t*>cnp.PyArray_DATA(a_row_count)
    cdef const int64_t* prio = <const int64_t*>cnp.PyArray_DATA(a_prio)
    cdef const int64_t* req = <const int64_t*>cnp.PyArray_DATA(a_req)
    cdef const int64_t* requested = <const int64_t*>cnp.PyArray_DATA(a_requested)
    cdef const int64_t* pod_count = <const int64_t*>cnp.PyArray_DATA(a_pod_count)
    cdef int64_t* seg = <int64_t*>cnp.PyArray_DATA(a_seg)
    cdef int64_t* used = <int64_t*>cnp.PyArray_DATA(a_used)
    cdef int64_t* count = <int64_t*>cnp.PyArray_DATA(a_count)
    cdef Py_ssize_t req_s0 = stride_of_dim(a_req, 0), used_s0 = stride_of_dim(a_used, 0)
    cdef Py_ssize_t rq_s0 = stride_of_dim(a_requested, 0), rq_s1 = stride_of_dim(a_requested, 1)
    cdef Py_ssize_t nw = cnp.PyArray_DIM(a_rows, 0)
    cdef Py_ssize_t nr = cnp.PyArray_DIM(a_req, 1)
    cdef Py_ssize_t n_rows = cnp.PyArray_DIM(a_requested, 0), n_pool = cnp.PyArray_DIM(a_prio, 0)
    cdef Py_ssize_t w, j
    cdef int64_t r, e, end, m = 0, total = 0
    if (cnp.PyArray_DIM(a_seg, 0) != nw + 1 or cnp.PyArray_DIM(a_used, 0) != nw or cnp.PyArray_DIM(a_used, 1) != nr
            or cnp.PyArray_DIM(a_count, 0) != nw or cnp.PyArray_DIM(a_requested, 1) != nr):
        raise ValueError("window_usage: output shapes do not match the nodes")
    if cnp.PyArray_DIM(a_req, 0) < n_pool:
        raise ValueError("window_usage: req has fewer entries than prio")
    for w in range(nw):  # checked first: nothing is written for a bad row
        r = rows[w]
        if (r < 0 or r >= cnp.PyArray_DIM(a_row_start, 0) or r >= cnp.PyArray_DIM(a_row_count, 0) or r >= n_rows
                or r >= cnp.PyArray_DIM(a_pod_count, 0)):
            raise IndexError(f"window_usage: row {r} outside the table")
        if row_start[r] < 0 or row_start[r] + row_count[r] > n_pool or row_count[r] < 0:
            raise IndexError(f"window_usage: row {r}'s pods outside the pool")
        total += row_count[r]
    cdef cnp.ndarray out = np.empty(total, dtype=np.int64)
    cdef int64_t* entries = <int64_t*>cnp.PyArray_DATA(out)
    with nogil:
        m = _usage_core(nw, nr, rows, row_start, row_count, prio, priority, req, req_s0, requested, rq_s0, rq_s1,
                        pod_count, seg, used, used_s0, count, entries)
    return out[:m]


cdef int64_t _usage_core(Py_ssize_t nw, Py_ssize_t nr, const int64_t* rows, const int64_t* row_start,
                         const int64_t* row_count, const int64_t* prio, int64_t priority, const int64_t* req,
                         Py_ssize_t req_s0, const int64_t* requested, Py_ssize_t rq_s0, Py_ssize_t rq_s1,
                         const int64_t* pod_count, int64_t* seg, int64_t* used, Py_ssize_t used_s0,
                         int64_t* count, int64_t* entries) noexcept nogil:
    """:func:`window_usage`'s pass (and :func:`window_pass`'s first step) over checked inputs:
    fills ``seg`` (W + 1), ``used`` (W rows of ``used_s0`` elements), ``count`` (W) and
    ``entries``; returns the number of entries, ``seg[W]``."""
    cdef Py_ssize_t w, j
    cdef int64_t r, e, end, m = 0
    for w in range(nw):
        r = rows[w]
        seg[w] = m
        for j in range(nr):
            used[w * used_s0 + j] = requested[r * rq_s0 + j * rq_s1]
        count[w] = pod_count[r]
        e = row_start[r]
        end = e + row_count[r]
        while e < end:
            if prio[e] < priority:
                entries[m] = e
                m += 1
                count[w] -= 1
                for j in range(nr):
                    used[w * used_s0 + j] -= req[e * req_s0 + j]
            e += 1
    seg[nw] = m
    return m


def refresh_rows(dst_req_, dst_count_, dst_ports_, src_req_, src_count_, src_ports_, rows_, log_, int64_t start,
                 int64_t end):
    """Copy the rows ``rows`` and the rows of the changed-rows log ``log`` entries ``start <= q < end``
    (entry ``q`` at ``q % len(log)``, ``_table``'s ring) from the table's ``requested`` (C, R)
    int64, ``pod_count`` (C,) int64 and ``has_host_ports`` (C,) bool into a shadow's arrays of the
    same shapes: the rows where the shadow may differ from the table after its nominated pods were
    added and the table changed (``runtime.nominated._nominated_shadow``; the whole columns were
    copied each failing cycle). The caller makes sure ``end - start`` is at most the log's length
    (else entries were overwritten) and that the log is the table's. A row outside the arrays
    raises IndexError before anything is written."""
    cdef cnp.ndarray d_req = matrix(dst_req_, cnp.NPY_INT64, True, True, "refresh_rows dst requested")
    cdef cnp.ndarray d_cnt = vector(dst_count_, cnp.NPY_INT64, True, True, "refresh_rows dst pod_count")
    cdef cnp.ndarray d_hp = vector(dst_ports_, cnp.NPY_BOOL, True, True, "refresh_rows dst has_host_ports")
    cdef cnp.ndarray s_req = matrix(src_req_, cnp.NPY_INT64, False, True, "refresh_rows requested")
    cdef cnp.ndarray s_cnt = vector(src_count_, cnp.NPY_INT64, False, True, "refresh_rows pod_count")
    cdef cnp.ndarray s_hp = vector(src_ports_, cnp.NPY_BOOL, False, True, "refresh_rows has_host_ports")
    cdef cnp.ndarray a_rows = vector(rows_, cnp.NPY_INT64, False, True, "refresh_rows rows")
    cdef cnp.ndarray a_log = vector(log_, cnp.NPY_INT64, False, True, "refresh_rows log")
    cdef Py_ssize_t n = cnp.PyArray_DIM(d_req, 0), nr = cnp.PyArray_DIM(d_req, 1)
    if (cnp.PyArray_DIM(s_req, 0) != n or cnp.PyArray_DIM(s_req, 1) != nr or cnp.PyArray_DIM(d_cnt, 0) != n
            or cnp.PyArray_DIM(s_cnt, 0) != n or cnp.PyArray_DIM(d_hp, 0) != n or cnp.PyArray_DIM(s_hp, 0) != n):
        raise ValueError("refresh_rows: shapes do not match")
    cdef Py_ssize_t size = cnp.PyArray_DIM(a_log, 0)
    if end < start or (size == 0 and end > start) or end - start > size:
        raise ValueError("refresh_rows: log entries outside the log")
    cdef int64_t* dreq = <int64_t*>cnp.PyArray_DATA(d_req)
    cdef int64_t* dcnt = <int64_t*>cnp.PyArray_DATA(d_cnt)
    cdef uint8_t* dhp = <uint8_t*>cnp.PyArray_DATA(d_hp)
    cdef const int64_t* sreq = <const int64_t*>cnp.PyArray_DATA(s_req)
    cdef const int64_t* scnt = <const int64_t*>cnp.PyArray_DATA(s_cnt)
    cdef const uint8_t* shp = <const uint8_t*>cnp.PyArray_DATA(s_hp)
    cdef const int64_t* rows = <const int64_t*>cnp.PyArray_DATA(a_rows)
    cdef const int64_t* log = <const int64_t*>cnp.PyArray_DATA(a_log)
    cdef Py_ssize_t ds0 = stride_of_dim(d_req, 0), ss0 = stride_of_dim(s_req, 0)
    cdef Py_ssize_t nq = cnp.PyArray_DIM(a_rows, 0), k, j
    cdef int64_t q, r
    for k in range(nq):  # checked first: a bad row leaves the shadow as it was
        if rows[k] < 0 or rows[k] >= n:
            raise IndexError(f"refresh_rows: row {rows[k]} outside {n} rows")
    for q in range(start, end):
        r = log[q % size]
        if r < 0 or r >= n:
            raise IndexError(f"refresh_rows: logged row {r} outside {n} rows")
    with nogil:
        for k in range(nq + <Py_ssize_t>(end - start)):
            r = rows[k] if k < nq else log[(start + k - nq) % size]
            for j in range(nr):
                dreq[r * ds0 + j] = sreq[r * ss0 + j]
            dcnt[r] = scnt[r]
            dhp[r] = shp[r]


def add_rows(out_, counts_, rows_, vectors_, pos_of_=None):
    """The nominated pods' usage summed per node: for each pod ``q`` with
    ``p = pos_of[rows[q]]`` (``rows[q]`` itself without ``pos_of``) and ``p >= 0``,
    ``out[p] += vectors[q]`` and ``counts[p] += 1``. A row may repeat (a node nominated several
    pods): unbuffered, as ``np.add.at``, which cost ~100-200 µs a call at a thousand pods. Returns
    how many pods were added. Raises IndexError for a row or position outside the arrays."""
    # (arrays checked as the memoryviews this took were, without a buffer acquisition each: see
    # select_victims) out (N, R) int64 with contiguous rows, written; counts (N,) int64, written;
    # rows (Q,) int64; vectors (Q, R) int64, any strides; pos_of (C,) int64 or None
    cdef cnp.ndarray a_out = matrix(out_, cnp.NPY_INT64, True, True, "add_rows out")
    cdef cnp.ndarray a_counts = vector(counts_, cnp.NPY_INT64, True, True, "add_rows counts")
    cdef cnp.ndarray a_rows = vector(rows_, cnp.NPY_INT64, False, True, "add_rows rows")
    cdef cnp.ndarray a_vectors = matrix(vectors_, cnp.NPY_INT64, False, False, "add_rows vectors")
    cdef bint direct = pos_of_ is None
    cdef cnp.ndarray a_pos = None if direct else vector(pos_of_, cnp.NPY_INT64, False, True, "add_rows pos_of")
    cdef int64_t* out = <int64_t*>cnp.PyArray_DATA(a_out)
    cdef int64_t* counts = <int64_t*>cnp.PyArray_DATA(a_counts)
    cdef const int64_t* rows = <const int64_t*>cnp.PyArray_DATA(a_rows)
    cdef const int64_t* vectors = <const int64_t*>cnp.PyArray_DATA(a_vectors)
    cdef const int64_t* pos_of = NULL if direct else <const int64_t*>cnp.PyArray_DATA(a_pos)
    cdef Py_ssize_t out_s0 = stride_of_dim(a_out, 0)
    cdef Py_ssize_t vec_s0 = stride_of_dim(a_vectors, 0), vec_s1 = stride_of_dim(a_vectors, 1)
    cdef Py_ssize_t nq = cnp.PyArray_DIM(a_rows, 0)
    cdef Py_ssize_t nr = cnp.PyArray_DIM(a_out, 1)
    cdef Py_ssize_t n_out = cnp.PyArray_DIM(a_out, 0)
    cdef Py_ssize_t n_pos = 0 if direct else cnp.PyArray_DIM(a_pos, 0)
    cdef Py_ssize_t q, j, added = 0
    cdef int64_t r, p
    if (cnp.PyArray_DIM(a_vectors, 0) != nq or cnp.PyArray_DIM(a_vectors, 1) != nr
            or cnp.PyArray_DIM(a_counts, 0) != n_out):
        raise ValueError("add_rows: shapes do not match")
    for q in range(nq):  # checked first: a bad index leaves ``out`` as it was
        r = rows[q]
        if direct:
            if r < 0 or r >= n_out:
                raise IndexError(f"add_rows: row {r} outside {n_out} rows")
        else:
            if r < 0 or r >= n_pos:
                raise IndexError(f"add_rows: row {r} outside {n_pos} positions")
            if pos_of[r] >= n_out:
                raise IndexError(f"add_rows: position {pos_of[r]} outside {n_out} rows")
    with nogil:
        for q in range(nq):
            r = rows[q]
            p = r if direct else pos_of[r]
            if p < 0:
                continue
            for j in range(nr):
                out[p * out_s0 + j] += vectors[q * vec_s0 + j * vec_s1]
            counts[p] += 1
            added += 1
    return added


cdef int _check_fit_inputs(str name, const int64_t[::1] rows, const int64_t[::1] allowed,
                           const int64_t[:, :] alloc, const int64_t[:, :] used,
                           const int64_t[::1] cols) except -1:
    """The bounds :func:`_fits_without_victims` reads unchecked: every row within the table's rows
    and every column within its resource columns (-1, a resource no node has, allowed)."""
    cdef Py_ssize_t i, j
    cdef int64_t r
    for i in range(rows.shape[0]):
        r = rows[i]
        if r < 0 or r >= allowed.shape[0] or r >= alloc.shape[0]:
            raise IndexError(f"{name}: row {r} outside the table")
    for j in range(cols.shape[0]):
        if cols[j] >= alloc.shape[1] or cols[j] >= used.shape[1]:
            raise IndexError(f"{name}: column {cols[j]} outside the table")
    return 0


cdef inline bint _fits_without_victims(Py_ssize_t i, int64_t r, const int64_t[::1] count,
                                       const int64_t[::1] allowed, const int64_t[:, :] alloc,
                                       const int64_t[:, :] used, const int64_t[::1] cols,
                                       const int64_t[::1] wants) noexcept nogil:
    """NodeResourcesFit's verdict on dry-run node ``i`` (table row ``r``) once its potential
    victims are gone: False when ``count[i] + 1`` pods exceed the row's allowed pods ("Too many
    pods") or a checked resource ``cols[j]`` has less free than ``wants[j]`` (free = allocatable -
    ``used[i]``; a column of -1, a resource no node has, has 0 free). Bounds: _check_fit_inputs."""
    cdef Py_ssize_t j
    cdef int64_t c, free
    if count[i] + 1 > allowed[r]:
        return False
    for j in range(cols.shape[0]):
        c = cols[j]
        free = alloc[r, c] - used[i, c] if c >= 0 else 0
        if wants[j] > free:
            return False
    return True


def fit_verdicts(const int64_t[::1] rows, const int64_t[::1] count, const int64_t[::1] allowed,
                 const int64_t[:, :] alloc, const int64_t[:, :] used, const int64_t[::1] cols,
                 const int64_t[::1] wants, uint8_t[::1] ok):
    """NodeResourcesFit's verdict on each dry-run node ``i`` (table row ``rows[i]``) once its
    potential victims are gone (:func:`_fits_without_victims`): ``ok[i]`` is cleared where it does
    not fit. Only clears: ``ok`` ANDs with what the other filters found."""
    cdef Py_ssize_t n = rows.shape[0]
    cdef Py_ssize_t i
    if (count.shape[0] != n or used.shape[0] != n or ok.shape[0] != n or wants.shape[0] != cols.shape[0]):
        raise ValueError("fit_verdicts: shapes do not match")
    _check_fit_inputs("fit_verdicts", rows, allowed, alloc, used, cols)
    with nogil:
        for i in range(n):
            if not _fits_without_victims(i, rows[i], count, allowed, alloc, used, cols, wants):
                ok[i] = 0

def settle_segments(pods_, entries_, seg_, nodes_, start_, volatile_):
    """Re-read ``status.startTime`` from the Pod objects (``pods``) of the entries of the given
    nodes' segments (``entries[seg[w]:seg[w + 1]]`` for ``w`` in ``nodes``) that are ``volatile``
    (not started when loaded, and startable in place: the scheduler sets a bound pod's start on
    the Pod itself; a start, once set, does not change); a volatile entry stays so while it has not
    started. Returns how many starts changed."""
    # (arrays checked as the memoryviews this took were, without a buffer acquisition each: see
    # select_victims) pods (P,) object; entries (M,), seg (W + 1,), nodes (K,) int64; start (P,)
    # float64 and volatile (P,) uint8, written
    cdef cnp.ndarray a_pods = vector(pods_, cnp.NPY_OBJECT, False, True, "settle_segments pods")
    cdef cnp.ndarray a_entries = vector(entries_, cnp.NPY_INT64, False, True, "settle_segments entries")
    cdef cnp.ndarray a_seg = vector(seg_, cnp.NPY_INT64, False, True, "settle_segments seg")
    cdef cnp.ndarray a_nodes = vector(nodes_, cnp.NPY_INT64, False, True, "settle_segments nodes")
    cdef cnp.ndarray a_start = vector(start_, cnp.NPY_FLOAT64, True, True, "settle_segments start")
    cdef cnp.ndarray a_volatile = vector(volatile_, cnp.NPY_UINT8, True, True, "settle_segments volatile")
    cdef PyObject** pods = <PyObject**>cnp.PyArray_DATA(a_pods)
    cdef const int64_t* entries = <const int64_t*>cnp.PyArray_DATA(a_entries)
    cdef const int64_t* seg = <const int64_t*>cnp.PyArray_DATA(a_seg)
    cdef const int64_t* nodes = <const int64_t*>cnp.PyArray_DATA(a_nodes)
    cdef double* start = <double*>cnp.PyArray_DATA(a_start)
    cdef uint8_t* volatile = <uint8_t*>cnp.PyArray_DATA(a_volatile)
    cdef Py_ssize_t n_pool = cnp.PyArray_DIM(a_pods, 0), n_entries = cnp.PyArray_DIM(a_entries, 0)
    cdef Py_ssize_t k, i, nn = cnp.PyArray_DIM(a_nodes, 0)
    cdef int64_t w, e
    cdef double inf = float("inf")
    cdef object t
    cdef Py_ssize_t changed = 0
    if cnp.PyArray_DIM(a_start, 0) < n_pool or cnp.PyArray_DIM(a_volatile, 0) < n_pool:
        raise ValueError("settle_segments: start and volatile need an entry per pod")
    for k in range(nn):
        w = nodes[k]
        if w < 0 or w + 1 >= cnp.PyArray_DIM(a_seg, 0):
            raise IndexError(f"settle_segments: node {w} outside the segments")
        if seg[w] < 0 or seg[w + 1] > n_entries:
            raise IndexError(f"settle_segments: node {w}'s segment outside the entries")
        for i in range(seg[w], seg[w + 1]):
            e = entries[i]
            if e < 0 or e >= n_pool:
                raise IndexError(f"settle_segments: entry {e} outside the pool")
            if not volatile[e]:
                continue
            if start[e] == inf:
                t = (<object>pods[e]).start_time
                if t is not None:
                    start[e] = t
                    changed += 1
            volatile[e] = start[e] == inf
    return changed


cdef double _INF = float("inf")


cdef inline bint _go_less(int64_t a, int64_t b, const int64_t* prio, const double* start) noexcept nogil:
    """Upstream ``MoreImportantVictim`` on two single-pod victims (pool entries): higher priority,
    then earlier start. Two pods that have not started (+inf) compare by the ``time.Now()`` their
    victims got in ``GetVictimsOnNode``, i.e. by entry (the node's pod-list order); two equal
    finite starts are a tie, left where Go's ``sort.Slice`` leaves it (see :func:`_pdqsort`)."""
    if prio[a] != prio[b]:
        return prio[a] > prio[b]
    if start[a] == _INF and start[b] == _INF:
        return a < b
    return start[a] < start[b]


# Go's sort.Slice (sort/zsortfunc.go's pdqsort_func, Go 1.19+) over pool entries with _go_less,
# element for element as fastsched.util.gosort.go_sort_slice (tested against Go's own output): it
# is not stable beyond 12 elements, and which tied victims are reprieved (and which a PDB counts as
# violating) follows the order it leaves them in.
ctypedef struct _Sorter:
    int64_t* d
    const int64_t* prio
    const double* start


cdef inline bint _lt(_Sorter* s, Py_ssize_t i, Py_ssize_t j) noexcept nogil:
    return _go_less(s.d[i], s.d[j], s.prio, s.start)


cdef inline void _sw(_Sorter* s, Py_ssize_t i, Py_ssize_t j) noexcept nogil:
    cdef int64_t x = s.d[i]
    s.d[i] = s.d[j]
    s.d[j] = x


cdef void _insertion_sort(_Sorter* s, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    cdef Py_ssize_t i, j
    for i in range(a + 1, b):
        j = i
        while j > a and _lt(s, j, j - 1):
            _sw(s, j, j - 1)
            j -= 1


cdef void _sift_down(_Sorter* s, Py_ssize_t lo, Py_ssize_t hi, Py_ssize_t first) noexcept nogil:
    cdef Py_ssize_t root = lo, child
    while True:
        child = 2 * root + 1
        if child >= hi:
            return
        if child + 1 < hi and _lt(s, first + child, first + child + 1):
            child += 1
        if not _lt(s, first + root, first + child):
            return
        _sw(s, first + root, first + child)
        root = child


cdef void _heap_sort(_Sorter* s, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    cdef Py_ssize_t first = a, hi = b - a, i
    i = (hi - 1) // 2
    while i >= 0:
        _sift_down(s, i, hi, first)
        i -= 1
    i = hi - 1
    while i >= 0:
        _sw(s, first, first + i)
        _sift_down(s, 0, i, first)
        i -= 1


cdef Py_ssize_t _partition(_Sorter* s, Py_ssize_t a, Py_ssize_t b, Py_ssize_t pivot, bint* already) noexcept nogil:
    cdef Py_ssize_t i = a + 1, j = b - 1
    _sw(s, a, pivot)
    while i <= j and _lt(s, i, a):
        i += 1
    while i <= j and not _lt(s, j, a):
        j -= 1
    if i > j:
        _sw(s, j, a)
        already[0] = 1
        return j
    _sw(s, i, j)
    i += 1
    j -= 1
    while True:
        while i <= j and _lt(s, i, a):
            i += 1
        while i <= j and not _lt(s, j, a):
            j -= 1
        if i > j:
            break
        _sw(s, i, j)
        i += 1
        j -= 1
    _sw(s, j, a)
    already[0] = 0
    return j


cdef Py_ssize_t _partition_equal(_Sorter* s, Py_ssize_t a, Py_ssize_t b, Py_ssize_t pivot) noexcept nogil:
    cdef Py_ssize_t i = a + 1, j = b - 1
    _sw(s, a, pivot)
    while True:
        while i <= j and not _lt(s, a, i):
            i += 1
        while i <= j and _lt(s, a, j):
            j -= 1
        if i > j:
            break
        _sw(s, i, j)
        i += 1
        j -= 1
    return i


cdef bint _partial_insertion_sort(_Sorter* s, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    cdef Py_ssize_t i = a + 1, j, step
    for step in range(5):  # maxSteps
        while i < b and not _lt(s, i, i - 1):
            i += 1
        if i == b:
            return 1
        if b - a < 50:  # shortestShifting
            return 0
        _sw(s, i, i - 1)
        if i - a >= 2:  # shift the smaller one to the left (Go stops at 1, not at a)
            j = i - 1
            while j >= 1:
                if not _lt(s, j, j - 1):
                    break
                _sw(s, j, j - 1)
                j -= 1
        if b - i >= 2:  # shift the greater one to the right
            j = i + 1
            while j < b:
                if not _lt(s, j, j - 1):
                    break
                _sw(s, j, j - 1)
                j += 1
    return 0


cdef inline Py_ssize_t _bits_len(uint64_t x) noexcept nogil:
    cdef Py_ssize_t n = 0
    while x:
        n += 1
        x >>= 1
    return n


cdef void _break_patterns(_Sorter* s, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    cdef Py_ssize_t length = b - a, idx, other
    cdef uint64_t r, modulus
    if length >= 8:
        r = <uint64_t> length  # xorshift seeded with the length: deterministic
        modulus = (<uint64_t> 1) << _bits_len(<uint64_t> length)
        for idx in range(a + (length // 4) * 2 - 1, a + (length // 4) * 2 + 2):
            r ^= r << 13
            r ^= r >> 7
            r ^= r << 17
            other = <Py_ssize_t> (r & (modulus - 1))
            if other >= length:
                other -= length
            _sw(s, idx, a + other)


cdef inline Py_ssize_t _median(_Sorter* s, Py_ssize_t a, Py_ssize_t b, Py_ssize_t c, int* swaps) noexcept nogil:
    cdef Py_ssize_t t
    if _lt(s, b, a):
        swaps[0] += 1
        t = a; a = b; b = t
    if _lt(s, c, b):
        swaps[0] += 1
        t = b; b = c; c = t
    if _lt(s, b, a):
        swaps[0] += 1
        t = a; a = b; b = t
    return b


cdef Py_ssize_t _choose_pivot(_Sorter* s, Py_ssize_t a, Py_ssize_t b, int* hint) noexcept nogil:
    cdef Py_ssize_t n = b - a
    cdef int swaps = 0
    cdef Py_ssize_t i = a + n // 4 * 1, j = a + n // 4 * 2, k = a + n // 4 * 3
    if n >= 8:
        if n >= 50:  # Tukey's ninther
            i = _median(s, i - 1, i, i + 1, &swaps)
            j = _median(s, j - 1, j, j + 1, &swaps)
            k = _median(s, k - 1, k, k + 1, &swaps)
        j = _median(s, i, j, k, &swaps)
    if swaps == 0:
        hint[0] = 1  # increasing
    elif swaps == 12:
        hint[0] = 2  # decreasing
    else:
        hint[0] = 0
    return j


cdef void _pdqsort(_Sorter* s, Py_ssize_t a, Py_ssize_t b, Py_ssize_t limit) noexcept nogil:
    cdef bint was_balanced = 1, was_partitioned = 1, already = 0
    cdef Py_ssize_t length, pivot, mid, left_len, right_len, i, j
    cdef int hint
    while True:
        length = b - a
        if length <= 12:
            _insertion_sort(s, a, b)
            return
        if limit == 0:
            _heap_sort(s, a, b)
            return
        if not was_balanced:
            _break_patterns(s, a, b)
            limit -= 1
        pivot = _choose_pivot(s, a, b, &hint)
        if hint == 2:
            i = a
            j = b - 1
            while i < j:
                _sw(s, i, j)
                i += 1
                j -= 1
            pivot = (b - 1) - (pivot - a)
            hint = 1
        if was_balanced and was_partitioned and hint == 1:
            if _partial_insertion_sort(s, a, b):
                return
        if a > 0 and not _lt(s, a - 1, pivot):
            a = _partition_equal(s, a, b, pivot)
            continue
        mid = _partition(s, a, b, pivot, &already)
        was_partitioned = already
        left_len = mid - a
        right_len = b - mid
        if left_len < right_len:
            was_balanced = left_len >= length // 8
            _pdqsort(s, a, mid, limit)
            a = mid + 1
        else:
            was_balanced = right_len >= length // 8
            _pdqsort(s, mid + 1, b, limit)
            b = mid


cdef void _go_sort(int64_t* items, Py_ssize_t n, const int64_t* prio, const double* start) noexcept nogil:
    """``sort.Slice(items, MoreImportantVictim)`` over pool entries, in place."""
    cdef _Sorter s
    s.d = items
    s.prio = prio
    s.start = start
    _pdqsort(&s, 0, n, _bits_len(<uint64_t> n))


def go_sort_entries(int64_t[::1] items, const int64_t[::1] prio, const double[::1] start):
    """:func:`_go_sort` from Python (its test against :func:`fastsched.util.gosort.go_sort_slice`)."""
    cdef Py_ssize_t n = items.shape[0]
    if n == 0:
        return None
    with nogil:
        _go_sort(&items[0], n, &prio[0], &start[0])
    return None


cdef Py_ssize_t _select_core(Py_ssize_t nw, const int64_t* seg, const int64_t* entries, const uint8_t* active,
                             const int64_t* prio, const double* start, const int64_t* prio_p, const double* start_p,
                             const int64_t* req, Py_ssize_t req_s0, const uint8_t* conflict,
                             const int64_t* pdb_ptr, const int32_t* pdb_ids, const int64_t* pdb_allowed,
                             Py_ssize_t n_pdbs, bint check_fit, const int64_t* cols, const int64_t* wants,
                             Py_ssize_t nk, const int64_t* rows, const int64_t* alloc, Py_ssize_t alloc_s0,
                             Py_ssize_t alloc_s1, const int64_t* allowed_pods, const int64_t* base_used,
                             Py_ssize_t used_s0, const int64_t* base_count, int64_t* victims, uint8_t* violating,
                             int64_t* n_victims, int64_t* n_violating, int64_t* top_priority,
                             int64_t* sum_priority, double* first_start, Py_ssize_t longest,
                             int64_t stop_k, int64_t nv_before, int64_t v_before) noexcept nogil:
    """:func:`select_victims`' pass over arrays its callers checked (the same reads and writes;
    ``longest`` the longest segment). ``conflict`` NULL: no potential victim conflicts;
    ``pdb_ptr`` NULL: none counts against a PDB. Returns the stopping node, -1, or -2 when the
    scratch memory could not be allocated (nothing written then)."""
    cdef int64_t row
    cdef Py_ssize_t w, t, j, q, group, lo, hi, n, nv, n_touched, i, k
    cdef int64_t m, e, c, r, cnt, d, n_viol_potential
    cdef bint ok, viol
    cdef Py_ssize_t stop = -1
    cdef int64_t cnv, cv
    cdef int64_t* order = <int64_t*> malloc((longest + 1) * sizeof(int64_t))
    cdef int64_t* tmp = <int64_t*> malloc((longest + 1) * sizeof(int64_t))
    cdef int64_t* minv = <int64_t*> malloc((longest + 1) * sizeof(int64_t))
    cdef int64_t* used = <int64_t*> malloc((nk + 1) * sizeof(int64_t))
    cdef int64_t* left = <int64_t*> malloc((n_pdbs + 1) * sizeof(int64_t))
    cdef uint8_t* touched = <uint8_t*> malloc((n_pdbs + 1) * sizeof(uint8_t))
    cdef int64_t* touched_list = <int64_t*> malloc((n_pdbs + 1) * sizeof(int64_t))
    # viol flags by pool entry are needed by the final comparison: keep them per local position
    cdef uint8_t* viol_of = <uint8_t*> malloc((longest + 1) * sizeof(uint8_t))
    cdef int64_t* local_of = <int64_t*> malloc((longest + 1) * sizeof(int64_t))
    if (order == NULL or tmp == NULL or minv == NULL or used == NULL or left == NULL or touched == NULL
            or touched_list == NULL or viol_of == NULL or local_of == NULL):
        free(order); free(tmp); free(minv); free(used); free(left); free(touched); free(touched_list)
        free(viol_of); free(local_of)
        return -2
    for d in range(n_pdbs):
        touched[d] = 0
    for w in range(nw):
        n_victims[w] = 0
        n_violating[w] = 0
        top_priority[w] = 0
        sum_priority[w] = 0
        first_start[w] = 0.0
        lo = seg[w]
        hi = seg[w + 1]
        n = hi - lo
        if not active[w] or n == 0:
            continue
        # 4. most important first, as sort.Slice(potentialVictims, MoreImportantVictim)
        #    leaves them (the potential victims come in the node's pod-list order)
        for t in range(n):
            order[t] = entries[lo + t]
        _go_sort(order, n, prio_p, start_p)
        # order[t] is a pool entry; find its potential-victim index m (entries are
        # ascending within the node, so a binary search over entries[lo:hi])
        for t in range(n):
            e = order[t]
            i = lo
            k = hi - 1
            while i < k:
                j = (i + k) // 2
                if entries[j] < e:
                    i = j + 1
                else:
                    k = j
            local_of[t] = i
        # 5. the PDB split: each matching budget loses one disruption per pod, in order, up
        #    to the first one driven below zero (v1.37.2 FilterVictimsWithPDBViolation)
        n_touched = 0
        for t in range(n):
            m = local_of[t]
            viol = 0
            for q in range(pdb_ptr[m] if pdb_ptr != NULL else 0, pdb_ptr[m + 1] if pdb_ptr != NULL else 0):
                d = pdb_ids[q]
                if not touched[d]:
                    touched[d] = 1
                    touched_list[n_touched] = d
                    n_touched += 1
                    left[d] = pdb_allowed[d]
                left[d] -= 1
                if left[d] < 0:
                    viol = 1
                    break
            viol_of[t] = viol
            violating[m] = viol
        for q in range(n_touched):
            touched[touched_list[q]] = 0
        # 6. reprieve: the violating pods first, then the others, each in importance order
        row = rows[w]
        for j in range(nk):
            c = cols[j]
            used[j] = base_used[w * used_s0 + c] if c >= 0 else 0
        cnt = base_count[w]
        nv = 0
        for group in range(2):
            for t in range(n):
                if viol_of[t] != (1 - group):
                    continue
                m = local_of[t]
                e = order[t]
                ok = conflict == NULL or not conflict[m]
                if ok and check_fit:
                    if cnt + 2 > allowed_pods[row]:  # with it back and the preemptor on top
                        ok = 0
                    else:
                        for j in range(nk):
                            c = cols[j]
                            r = req[e * req_s0 + c] if c >= 0 else 0
                            if wants[j] > (alloc[row * alloc_s0 + c * alloc_s1] if c >= 0 else 0) - (used[j] + r):
                                ok = 0
                                break
                if ok:
                    for j in range(nk):
                        c = cols[j]
                        if c >= 0:
                            used[j] += req[e * req_s0 + c]
                    cnt += 1
                else:
                    minv[nv] = t  # a local position: order[t], viol_of[t]
                    nv += 1
        # 7. the victims in reprieve order (the violating ones first), re-sorted by
        #    sort.Slice only when both groups of potential victims are non-empty
        n_viol_potential = 0
        for t in range(n):
            n_viol_potential += viol_of[t]
        for i in range(nv):
            tmp[i] = order[minv[i]]
            n_violating[w] += viol_of[minv[i]]
        if 0 < n_viol_potential < n:
            _go_sort(tmp, nv, prio_p, start_p)
        n_victims[w] = nv
        for i in range(nv):
            e = tmp[i]
            victims[lo + i] = e
            sum_priority[w] += prio[e] + PRIORITY_OFFSET
        if nv > 0:
            top_priority[w] = prio[tmp[0]]
            first_start[w] = start[tmp[0]]
            if stop_k >= 0:  # a candidate: walk_stop's rule, as the walk adds it
                if n_violating[w] == 0:
                    nv_before += 1
                else:
                    v_before += 1
                cnv = nv_before if nv_before < stop_k else stop_k
                cv = v_before if v_before < stop_k else stop_k
                if cnv > 0 and cnv + cv >= stop_k:
                    stop = w
                    break
    if stop >= 0:  # the nodes after the stopping one: no victims
        for w in range(stop + 1, nw):
            n_victims[w] = 0
            n_violating[w] = 0
            top_priority[w] = 0
            sum_priority[w] = 0
            first_start[w] = 0.0
    free(order); free(tmp); free(minv); free(used); free(left); free(touched); free(touched_list)
    free(viol_of); free(local_of)
    return stop


def select_victims(seg_, entries_, active_, prio_, start_, req_, conflict_, pdb_ptr_, pdb_ids_, pdb_allowed_,
                   bint check_fit, cols_, wants_, rows_, alloc_, allowed_pods_, base_used_, base_count_,
                   victims_, violating_, n_victims_, n_violating_, top_priority_, sum_priority_, first_start_,
                   int64_t stop_k=-1, int64_t nv_before=0, int64_t v_before=0):
    """SelectVictimsOnNode's steps 4-7 on every node ``w`` with ``active[w]`` (the preemptor fits
    once all its potential victims ``entries[seg[w]:seg[w + 1]]`` are gone).

    Per potential victim ``m`` (an index into ``entries``): ``conflict[m]`` says it uses a host port
    the preemptor wants; its PDBs are ``pdb_ids[pdb_ptr[m]:pdb_ptr[m + 1]]`` (indices into
    ``pdb_allowed``, the budgets' ``disruptionsAllowed``, counted down per node as upstream does).
    With ``check_fit``, NodeResourcesFit's checks apply: ``wants[j]`` of table column ``cols[j]``
    against ``alloc[rows[w], cols[j]]`` (the node's allocatable, table row ``rows[w]``) minus the
    node's usage, which starts at ``base_used[w, cols[j]]`` (requests left once every potential
    victim is gone, nominated pods included) and ``base_count[w]`` pods, and "Too many pods"
    against ``allowed_pods[rows[w]]``; a column of -1 (a resource no node has) has 0 allocatable
    and 0 in use.

    Outputs per node: ``victims[seg[w]:seg[w] + n_victims[w]]`` the victims' entries in upstream's
    final order, ``n_violating[w]`` how many violate a PDB, and for pickOneNodeForPreemption the
    first victim's priority (``top_priority``), the sum of (priority + 2^31) over the victims
    (``sum_priority``) and the first victim's start (``first_start``: the earliest start among the
    highest-priority victims). ``violating[m]`` marks each potential victim's PDB split.

    ``stop_k`` >= 0: DryRunPreemption's stopping rule (:func:`walk_stop` with ``k = stop_k`` and
    ``nv_before`` / ``v_before`` candidates before these nodes; a candidate is an active node with
    victims) ends the pass after the node that stops the walk: the nodes after it get no victims
    (their outputs 0, their potential victims' ``violating`` untouched). Returns the position of
    that node, or -1 (every node done; also without ``stop_k``).
    """
    # The arrays are checked as the typed memoryviews this kernel took were (dtype, native order,
    # 1-d and C-contiguous, or 2-d with contiguous rows where noted) without a buffer acquisition
    # each (~1.3k instructions apiece, 25 a call: issue 29), and read through their data pointers.
    # seg (W + 1,) int64; entries, conflict, victims, violating (M,); pdb_ptr (M + 1,) int64;
    # pdb_ids int32 and pdb_allowed int64 (the budgets); prio, start (P,) int64 / float64 and
    # req (P, R) int64 with contiguous rows (the pool); cols, wants (K,) int64; rows, base_count,
    # active and the per-node outputs (W,); alloc (C, R) int64 (any strides), allowed_pods (C,);
    # base_used (W, R) int64 with contiguous rows.
    cdef cnp.ndarray a_seg = vector(seg_, cnp.NPY_INT64, False, True, "select_victims seg")
    cdef cnp.ndarray a_entries = vector(entries_, cnp.NPY_INT64, False, True, "select_victims entries")
    cdef cnp.ndarray a_active = vector(active_, cnp.NPY_UINT8, False, True, "select_victims active")
    cdef cnp.ndarray a_prio = vector(prio_, cnp.NPY_INT64, False, True, "select_victims prio")
    cdef cnp.ndarray a_start = vector(start_, cnp.NPY_FLOAT64, False, True, "select_victims start")
    cdef cnp.ndarray a_req = matrix(req_, cnp.NPY_INT64, False, True, "select_victims req")
    cdef cnp.ndarray a_conflict = vector(conflict_, cnp.NPY_UINT8, False, True, "select_victims conflict")
    cdef cnp.ndarray a_pdb_ptr = vector(pdb_ptr_, cnp.NPY_INT64, False, True, "select_victims pdb_ptr")
    cdef cnp.ndarray a_pdb_ids = vector(pdb_ids_, cnp.NPY_INT32, False, True, "select_victims pdb_ids")
    cdef cnp.ndarray a_pdb_allowed = vector(pdb_allowed_, cnp.NPY_INT64, False, True, "select_victims pdb_allowed")
    cdef cnp.ndarray a_cols = vector(cols_, cnp.NPY_INT64, False, True, "select_victims cols")
    cdef cnp.ndarray a_wants = vector(wants_, cnp.NPY_INT64, False, True, "select_victims wants")
    cdef cnp.ndarray a_rows = vector(rows_, cnp.NPY_INT64, False, True, "select_victims rows")
    cdef cnp.ndarray a_alloc = matrix(alloc_, cnp.NPY_INT64, False, False, "select_victims alloc")
    cdef cnp.ndarray a_allowed = vector(allowed_pods_, cnp.NPY_INT64, False, True, "select_victims allowed_pods")
    cdef cnp.ndarray a_base_used = matrix(base_used_, cnp.NPY_INT64, False, True, "select_victims base_used")
    cdef cnp.ndarray a_base_count = vector(base_count_, cnp.NPY_INT64, False, True, "select_victims base_count")
    cdef cnp.ndarray a_victims = vector(victims_, cnp.NPY_INT64, True, True, "select_victims victims")
    cdef cnp.ndarray a_violating = vector(violating_, cnp.NPY_UINT8, True, True, "select_victims violating")
    cdef cnp.ndarray a_n_victims = vector(n_victims_, cnp.NPY_INT64, True, True, "select_victims n_victims")
    cdef cnp.ndarray a_n_violating = vector(n_violating_, cnp.NPY_INT64, True, True, "select_victims n_violating")
    cdef cnp.ndarray a_top = vector(top_priority_, cnp.NPY_INT64, True, True, "select_victims top_priority")
    cdef cnp.ndarray a_sum = vector(sum_priority_, cnp.NPY_INT64, True, True, "select_victims sum_priority")
    cdef cnp.ndarray a_first = vector(first_start_, cnp.NPY_FLOAT64, True, True, "select_victims first_start")
    cdef const int64_t* seg = <const int64_t*>cnp.PyArray_DATA(a_seg)
    cdef const int64_t* entries = <const int64_t*>cnp.PyArray_DATA(a_entries)
    cdef const uint8_t* active = <const uint8_t*>cnp.PyArray_DATA(a_active)
    cdef const int64_t* prio = <const int64_t*>cnp.PyArray_DATA(a_prio)
    cdef const double* start = <const double*>cnp.PyArray_DATA(a_start)
    cdef const int64_t* req = <const int64_t*>cnp.PyArray_DATA(a_req)
    cdef const uint8_t* conflict = <const uint8_t*>cnp.PyArray_DATA(a_conflict)
    cdef const int64_t* pdb_ptr = <const int64_t*>cnp.PyArray_DATA(a_pdb_ptr)
    cdef const int32_t* pdb_ids = <const int32_t*>cnp.PyArray_DATA(a_pdb_ids)
    cdef const int64_t* pdb_allowed = <const int64_t*>cnp.PyArray_DATA(a_pdb_allowed)
    cdef const int64_t* cols = <const int64_t*>cnp.PyArray_DATA(a_cols)
    cdef const int64_t* wants = <const int64_t*>cnp.PyArray_DATA(a_wants)
    cdef const int64_t* rows = <const int64_t*>cnp.PyArray_DATA(a_rows)
    cdef const int64_t* alloc = <const int64_t*>cnp.PyArray_DATA(a_alloc)
    cdef const int64_t* allowed_pods = <const int64_t*>cnp.PyArray_DATA(a_allowed)
    cdef const int64_t* base_used = <const int64_t*>cnp.PyArray_DATA(a_base_used)
    cdef const int64_t* base_count = <const int64_t*>cnp.PyArray_DATA(a_base_count)
    cdef int64_t* victims = <int64_t*>cnp.PyArray_DATA(a_victims)
    cdef uint8_t* violating = <uint8_t*>cnp.PyArray_DATA(a_violating)
    cdef int64_t* n_victims = <int64_t*>cnp.PyArray_DATA(a_n_victims)
    cdef int64_t* n_violating = <int64_t*>cnp.PyArray_DATA(a_n_violating)
    cdef int64_t* top_priority = <int64_t*>cnp.PyArray_DATA(a_top)
    cdef int64_t* sum_priority = <int64_t*>cnp.PyArray_DATA(a_sum)
    cdef double* first_start = <double*>cnp.PyArray_DATA(a_first)
    # strides in elements of the 2-d arrays (req and base_used: rows contiguous)
    cdef Py_ssize_t req_s0 = stride_of_dim(a_req, 0)
    cdef Py_ssize_t used_s0 = stride_of_dim(a_base_used, 0)
    cdef Py_ssize_t alloc_s0 = stride_of_dim(a_alloc, 0), alloc_s1 = stride_of_dim(a_alloc, 1)
    cdef Py_ssize_t nw = cnp.PyArray_DIM(a_seg, 0) - 1
    cdef Py_ssize_t nk = cnp.PyArray_DIM(a_cols, 0)
    cdef Py_ssize_t n_pdbs = cnp.PyArray_DIM(a_pdb_allowed, 0)
    cdef Py_ssize_t n_alloc = cnp.PyArray_DIM(a_alloc, 0), alloc_width = cnp.PyArray_DIM(a_alloc, 1)
    cdef Py_ssize_t w, j, longest = 0
    cdef int64_t m
    cdef Py_ssize_t stop = -1
    cdef const int64_t* prio_p = prio if cnp.PyArray_DIM(a_prio, 0) else NULL
    cdef const double* start_p = start if cnp.PyArray_DIM(a_start, 0) else NULL
    if (nw < 0 or cnp.PyArray_DIM(a_rows, 0) != nw or cnp.PyArray_DIM(a_base_used, 0) != nw
            or cnp.PyArray_DIM(a_base_count, 0) != nw or cnp.PyArray_DIM(a_wants, 0) != nk
            or cnp.PyArray_DIM(a_active, 0) < nw or cnp.PyArray_DIM(a_n_victims, 0) < nw
            or cnp.PyArray_DIM(a_n_violating, 0) < nw or cnp.PyArray_DIM(a_top, 0) < nw
            or cnp.PyArray_DIM(a_sum, 0) < nw or cnp.PyArray_DIM(a_first, 0) < nw):
        raise ValueError("select_victims: shapes do not match the nodes")
    for w in range(nw):
        if active[w] and (rows[w] < 0 or rows[w] >= n_alloc or rows[w] >= cnp.PyArray_DIM(a_allowed, 0)):
            raise IndexError(f"select_victims: row {rows[w]} outside the table")
    for j in range(nk):
        if cols[j] >= alloc_width or cols[j] >= cnp.PyArray_DIM(a_base_used, 1):
            raise IndexError(f"select_victims: column {cols[j]} outside the table")
    for w in range(nw):
        if seg[w + 1] - seg[w] > longest:
            longest = seg[w + 1] - seg[w]
        if seg[w + 1] < seg[w] or seg[w] < 0:
            raise ValueError("select_victims: seg is not ascending from 0")
    m = seg[nw] if nw >= 0 else 0
    if (cnp.PyArray_DIM(a_entries, 0) < m or cnp.PyArray_DIM(a_conflict, 0) < m or cnp.PyArray_DIM(a_victims, 0) < m
            or cnp.PyArray_DIM(a_violating, 0) < m or cnp.PyArray_DIM(a_pdb_ptr, 0) < m + 1):
        raise ValueError("select_victims: the per-victim arrays are shorter than seg says")
    with nogil:
        stop = _select_core(nw, seg, entries, active, prio, start, prio_p, start_p, req, req_s0, conflict, pdb_ptr,
                            pdb_ids, pdb_allowed, n_pdbs, check_fit, cols, wants, nk, rows, alloc, alloc_s0,
                            alloc_s1, allowed_pods, base_used, used_s0, base_count, victims, violating, n_victims,
                            n_violating, top_priority, sum_priority, first_start, longest, stop_k, nv_before,
                            v_before)
    if stop == -2:
        raise MemoryError()
    return stop


def window_pass(rows_, row_start_, row_count_, prio_, int64_t priority, req_, requested_, pod_count_,
                nom_rows_, nom_vectors_, pos_of_, allowed_, alloc_, cols_, wants_, bint check_fit,
                pods_, start_, volatile_, int64_t stop_k, int64_t nv_before, int64_t v_before,
                int8_t candidate, int8_t filtered, int8_t no_victims, int8_t no_victim_left):
    """One dry-run window in one call when NodeResourcesFit is the only filter left to judge (the
    node-only ones known to pass, no port check, no PDB): :func:`window_usage`, the nominated
    pods' usage (:func:`add_rows` through ``pos_of``), :func:`window_fit`,
    :func:`settle_segments` on the candidates, :func:`select_victims` (no conflicts, no budgets)
    and the candidates left without victims marked ``no_victim_left`` up to the node that stops
    the walk; the arrays those calls took are made here (the window's own glue was a third of
    its cost at 500 nodes: issue 29).

    Inputs as those kernels take them: ``rows`` (W,) table rows; the pool's ``row_start``,
    ``row_count`` (C,), ``prio`` (P,) int64, ``req`` (P, R) int64 with contiguous rows, ``pods``
    (P,) object, ``start`` (P,) float64 and ``volatile`` (P,) uint8 (both written); the table's
    ``requested`` (C, R), ``pod_count`` and ``allowed`` (C,), ``alloc`` (C, R) int64 (any
    strides); the nominated pods that count, ``nom_rows`` (Q,) int64 and ``nom_vectors`` (Q, R)
    int64 (any strides); ``pos_of`` (C,) int64 scratch, -1 everywhere (left so); NodeResourcesFit's
    ``cols`` / ``wants`` (K,) int64.

    Returns (stop, number of ``filtered`` nodes, entries (M,), seg (W + 1,), used (W, R), count
    (W,), kind (W,) int8, code (W,) int8 zeros, victims (M,), n_victims, n_violating,
    top_priority, sum_priority (W,) int64, first_start (W,) float64), each as its kernel leaves it.
    """
    cdef cnp.ndarray a_rows = vector(rows_, cnp.NPY_INT64, False, True, "window_pass rows")
    cdef cnp.ndarray a_row_start = vector(row_start_, cnp.NPY_INT64, False, True, "window_pass row_start")
    cdef cnp.ndarray a_row_count = vector(row_count_, cnp.NPY_INT64, False, True, "window_pass row_count")
    cdef cnp.ndarray a_prio = vector(prio_, cnp.NPY_INT64, False, True, "window_pass prio")
    cdef cnp.ndarray a_req = matrix(req_, cnp.NPY_INT64, False, True, "window_pass req")
    cdef cnp.ndarray a_requested = matrix(requested_, cnp.NPY_INT64, False, False, "window_pass requested")
    cdef cnp.ndarray a_pod_count = vector(pod_count_, cnp.NPY_INT64, False, True, "window_pass pod_count")
    cdef cnp.ndarray a_nom_rows = vector(nom_rows_, cnp.NPY_INT64, False, True, "window_pass nom_rows")
    cdef cnp.ndarray a_nom_vectors = matrix(nom_vectors_, cnp.NPY_INT64, False, False, "window_pass nom_vectors")
    cdef cnp.ndarray a_pos = vector(pos_of_, cnp.NPY_INT64, True, True, "window_pass pos_of")
    cdef cnp.ndarray a_allowed = vector(allowed_, cnp.NPY_INT64, False, True, "window_pass allowed")
    cdef cnp.ndarray a_alloc = matrix(alloc_, cnp.NPY_INT64, False, False, "window_pass alloc")
    cdef cnp.ndarray a_cols = vector(cols_, cnp.NPY_INT64, False, True, "window_pass cols")
    cdef cnp.ndarray a_wants = vector(wants_, cnp.NPY_INT64, False, True, "window_pass wants")
    cdef cnp.ndarray a_pods = vector(pods_, cnp.NPY_OBJECT, False, True, "window_pass pods")
    cdef cnp.ndarray a_start = vector(start_, cnp.NPY_FLOAT64, True, True, "window_pass start")
    cdef cnp.ndarray a_volatile = vector(volatile_, cnp.NPY_UINT8, True, True, "window_pass volatile")
    cdef const int64_t* rows = <const int64_t*>cnp.PyArray_DATA(a_rows)
    cdef const int64_t* row_start = <const int64_t*>cnp.PyArray_DATA(a_row_start)
    cdef const int64_t* row_count = <const int64_t*>cnp.PyArray_DATA(a_row_count)
    cdef const int64_t* prio = <const int64_t*>cnp.PyArray_DATA(a_prio)
    cdef const int64_t* req = <const int64_t*>cnp.PyArray_DATA(a_req)
    cdef const int64_t* requested = <const int64_t*>cnp.PyArray_DATA(a_requested)
    cdef const int64_t* pod_count = <const int64_t*>cnp.PyArray_DATA(a_pod_count)
    cdef const int64_t* nom_rows = <const int64_t*>cnp.PyArray_DATA(a_nom_rows)
    cdef const int64_t* nom_vectors = <const int64_t*>cnp.PyArray_DATA(a_nom_vectors)
    cdef int64_t* pos_of = <int64_t*>cnp.PyArray_DATA(a_pos)
    cdef const int64_t* allowed = <const int64_t*>cnp.PyArray_DATA(a_allowed)
    cdef const int64_t* alloc = <const int64_t*>cnp.PyArray_DATA(a_alloc)
    cdef const int64_t* cols = <const int64_t*>cnp.PyArray_DATA(a_cols)
    cdef const int64_t* wants = <const int64_t*>cnp.PyArray_DATA(a_wants)
    cdef PyObject** pods = <PyObject**>cnp.PyArray_DATA(a_pods)
    cdef double* start = <double*>cnp.PyArray_DATA(a_start)
    cdef uint8_t* volatile = <uint8_t*>cnp.PyArray_DATA(a_volatile)
    cdef Py_ssize_t req_s0 = stride_of_dim(a_req, 0)
    cdef Py_ssize_t rq_s0 = stride_of_dim(a_requested, 0), rq_s1 = stride_of_dim(a_requested, 1)
    cdef Py_ssize_t nv_s0 = stride_of_dim(a_nom_vectors, 0), nv_s1 = stride_of_dim(a_nom_vectors, 1)
    cdef Py_ssize_t alloc_s0 = stride_of_dim(a_alloc, 0), alloc_s1 = stride_of_dim(a_alloc, 1)
    cdef Py_ssize_t nw = cnp.PyArray_DIM(a_rows, 0)
    cdef Py_ssize_t nr = cnp.PyArray_DIM(a_req, 1)
    cdef Py_ssize_t nk = cnp.PyArray_DIM(a_cols, 0)
    cdef Py_ssize_t nq = cnp.PyArray_DIM(a_nom_rows, 0)
    cdef Py_ssize_t n_pool = cnp.PyArray_DIM(a_prio, 0)
    cdef Py_ssize_t n_table = cnp.PyArray_DIM(a_requested, 0)
    cdef Py_ssize_t w, j, q, i, done, longest = 0, n_filtered = 0
    cdef int64_t r, e, end, c, p, m = 0, total = 0
    cdef bint ok
    cdef object t
    cdef double inf = _INF
    if (cnp.PyArray_DIM(a_requested, 1) != nr
            or cnp.PyArray_DIM(a_nom_vectors, 0) != nq or cnp.PyArray_DIM(a_nom_vectors, 1) != nr
            or cnp.PyArray_DIM(a_wants, 0) != nk or cnp.PyArray_DIM(a_req, 0) < n_pool
            or cnp.PyArray_DIM(a_pods, 0) < n_pool or cnp.PyArray_DIM(a_start, 0) < n_pool
            or cnp.PyArray_DIM(a_volatile, 0) < n_pool):
        raise ValueError("window_pass: shapes do not match")
    for j in range(nk):
        if cols[j] >= nr or cols[j] >= cnp.PyArray_DIM(a_alloc, 1):
            raise IndexError(f"window_pass: column {cols[j]} outside the table")
    for w in range(nw):  # checked first: nothing is written for a bad row
        r = rows[w]
        if (r < 0 or r >= n_table or r >= cnp.PyArray_DIM(a_row_start, 0) or r >= cnp.PyArray_DIM(a_row_count, 0)
                or r >= cnp.PyArray_DIM(a_pod_count, 0) or r >= cnp.PyArray_DIM(a_allowed, 0)
                or r >= cnp.PyArray_DIM(a_alloc, 0) or r >= cnp.PyArray_DIM(a_pos, 0)):
            raise IndexError(f"window_pass: row {r} outside the table")
        if row_start[r] < 0 or row_start[r] + row_count[r] > n_pool or row_count[r] < 0:
            raise IndexError(f"window_pass: row {r}'s pods outside the pool")
        if pos_of[r] != -1:
            raise ValueError(f"window_pass: pos_of[{r}] is {pos_of[r]}, not -1")
        total += row_count[r]
        if row_count[r] > longest:
            longest = row_count[r]
    for q in range(nq):
        if nom_rows[q] < 0 or nom_rows[q] >= cnp.PyArray_DIM(a_pos, 0):
            raise IndexError(f"window_pass: nominated row {nom_rows[q]} outside {cnp.PyArray_DIM(a_pos, 0)} positions")
    cdef cnp.ndarray o_entries = np.empty(total, dtype=np.int64)
    cdef cnp.ndarray o_seg = np.empty(nw + 1, dtype=np.int64)
    cdef cnp.ndarray o_used = np.empty((nw, nr), dtype=np.int64)
    cdef cnp.ndarray o_count = np.empty(nw, dtype=np.int64)
    cdef cnp.ndarray o_kind = np.empty(nw, dtype=np.int8)
    cdef cnp.ndarray o_code = np.zeros(nw, dtype=np.int8)
    cdef cnp.ndarray o_active = np.empty(nw, dtype=np.uint8)
    cdef cnp.ndarray o_victims = np.empty(total, dtype=np.int64)
    cdef cnp.ndarray o_violating = np.empty(total, dtype=np.uint8)
    cdef cnp.ndarray o_n_victims = np.empty(nw, dtype=np.int64)
    cdef cnp.ndarray o_n_violating = np.empty(nw, dtype=np.int64)
    cdef cnp.ndarray o_top = np.empty(nw, dtype=np.int64)
    cdef cnp.ndarray o_sum = np.empty(nw, dtype=np.int64)
    cdef cnp.ndarray o_first = np.empty(nw, dtype=np.float64)
    cdef int64_t* entries = <int64_t*>cnp.PyArray_DATA(o_entries)
    cdef int64_t* seg = <int64_t*>cnp.PyArray_DATA(o_seg)
    cdef int64_t* used = <int64_t*>cnp.PyArray_DATA(o_used)
    cdef int64_t* count = <int64_t*>cnp.PyArray_DATA(o_count)
    cdef int8_t* kind = <int8_t*>cnp.PyArray_DATA(o_kind)
    cdef uint8_t* active = <uint8_t*>cnp.PyArray_DATA(o_active)
    cdef int64_t* n_victims = <int64_t*>cnp.PyArray_DATA(o_n_victims)
    cdef Py_ssize_t stop
    with nogil:
        # window_usage: the potential victims (priority below the preemptor's), the usage without them
        m = _usage_core(nw, nr, rows, row_start, row_count, prio, priority, req, req_s0, requested, rq_s0, rq_s1,
                        pod_count, seg, used, nr, count, entries)
        # add_rows through pos_of: the nominated pods that count, on the window's nodes
        if nq:
            for w in range(nw):
                pos_of[rows[w]] = w
            for q in range(nq):
                p = pos_of[nom_rows[q]]
                if p < 0:
                    continue
                for j in range(nr):
                    used[p * nr + j] += nom_vectors[q * nv_s0 + j * nv_s1]
                count[p] += 1
            for w in range(nw):
                pos_of[rows[w]] = -1
        # window_fit
        for w in range(nw):
            active[w] = 0
            if seg[w + 1] == seg[w]:
                kind[w] = no_victims
                continue
            ok = True
            if check_fit:
                r = rows[w]
                if count[w] + 1 > allowed[r]:
                    ok = False
                else:
                    for j in range(nk):
                        c = cols[j]
                        if wants[j] > ((alloc[r * alloc_s0 + c * alloc_s1] - used[w * nr + c]) if c >= 0 else 0):
                            ok = False
                            break
            if ok:
                kind[w] = candidate
                active[w] = 1
            else:
                kind[w] = filtered
                n_filtered += 1
    # settle_segments on the candidates (Pod objects read: with the GIL)
    for w in range(nw):
        if not active[w]:
            continue
        for i in range(seg[w], seg[w + 1]):
            e = entries[i]
            if not volatile[e]:
                continue
            if start[e] == inf:
                t = (<object>pods[e]).start_time
                if t is not None:
                    start[e] = t
            volatile[e] = start[e] == inf
    cdef const int64_t* prio_p = prio if n_pool else NULL
    cdef const double* start_p = start if n_pool else NULL
    with nogil:
        stop = _select_core(nw, seg, entries, active, prio, start, prio_p, start_p, req, req_s0, NULL, NULL, NULL,
                            NULL, 0, check_fit, cols, wants, nk, rows, alloc, alloc_s0, alloc_s1, allowed, used, nr,
                            count, <int64_t*>cnp.PyArray_DATA(o_victims), <uint8_t*>cnp.PyArray_DATA(o_violating),
                            n_victims, <int64_t*>cnp.PyArray_DATA(o_n_violating),
                            <int64_t*>cnp.PyArray_DATA(o_top), <int64_t*>cnp.PyArray_DATA(o_sum),
                            <double*>cnp.PyArray_DATA(o_first), longest, stop_k, nv_before, v_before)
        if stop != -2:
            # candidates whose every potential victim was reprieved, up to the stopping node
            done = nw if stop < 0 else stop + 1
            for w in range(done):
                if active[w] and n_victims[w] == 0:
                    kind[w] = no_victim_left
    if stop == -2:
        raise MemoryError()
    return (stop, n_filtered, o_entries[:m], o_seg, o_used, o_count, o_kind, o_code, o_victims[:m],
            o_n_victims, o_n_violating, o_top, o_sum, o_first)


def pick_candidate(num_violations_, top_priority_, sum_priority_, n_victims_, first_start_):
    """Upstream ``pickOneNodeForPreemption`` with its default criteria in one pass: the index of
    the first candidate whose (violations, highest victim priority, sum of priorities, victims)
    is least and, among those, whose ``first_start`` is greatest. Filtering the candidates by each
    criterion in turn, as upstream does, keeps exactly the lexicographically best ones, and it
    takes the first node left: the first of them in candidate order. (The start times are finite
    or +inf, never NaN.)"""
    # (arrays checked as the memoryviews this took were, without a buffer acquisition each: see select_victims)
    cdef cnp.ndarray a_nv = vector(num_violations_, cnp.NPY_INT64, False, False, "pick_candidate num_violations")
    cdef cnp.ndarray a_top = vector(top_priority_, cnp.NPY_INT64, False, False, "pick_candidate top_priority")
    cdef cnp.ndarray a_sum = vector(sum_priority_, cnp.NPY_INT64, False, False, "pick_candidate sum_priority")
    cdef cnp.ndarray a_nvic = vector(n_victims_, cnp.NPY_INT64, False, False, "pick_candidate n_victims")
    cdef cnp.ndarray a_first = vector(first_start_, cnp.NPY_FLOAT64, False, False, "pick_candidate first_start")
    # strided views read as s[i * stride] (strides in elements)
    cdef const int64_t* nv_p = <const int64_t*>cnp.PyArray_DATA(a_nv)
    cdef const int64_t* top_p = <const int64_t*>cnp.PyArray_DATA(a_top)
    cdef const int64_t* sum_p = <const int64_t*>cnp.PyArray_DATA(a_sum)
    cdef const int64_t* nvic_p = <const int64_t*>cnp.PyArray_DATA(a_nvic)
    cdef const double* first_p = <const double*>cnp.PyArray_DATA(a_first)
    cdef Py_ssize_t s_nv = stride_of(a_nv), s_top = stride_of(a_top), s_sum = stride_of(a_sum)
    cdef Py_ssize_t s_nvic = stride_of(a_nvic), s_first = stride_of(a_first)
    cdef Py_ssize_t n = cnp.PyArray_DIM(a_nv, 0)
    cdef Py_ssize_t i, best = 0
    if (cnp.PyArray_DIM(a_top, 0) != n or cnp.PyArray_DIM(a_sum, 0) != n or cnp.PyArray_DIM(a_nvic, 0) != n
            or cnp.PyArray_DIM(a_first, 0) != n):
        raise ValueError("pick_candidate: the criteria arrays differ in length")
    if n == 0:
        raise ValueError("pick_candidate: no candidate")
    with nogil:
        for i in range(1, n):
            if nv_p[i * s_nv] != nv_p[best * s_nv]:
                if nv_p[i * s_nv] < nv_p[best * s_nv]:
                    best = i
                continue
            if top_p[i * s_top] != top_p[best * s_top]:
                if top_p[i * s_top] < top_p[best * s_top]:
                    best = i
                continue
            if sum_p[i * s_sum] != sum_p[best * s_sum]:
                if sum_p[i * s_sum] < sum_p[best * s_sum]:
                    best = i
                continue
            if nvic_p[i * s_nvic] != nvic_p[best * s_nvic]:
                if nvic_p[i * s_nvic] < nvic_p[best * s_nvic]:
                    best = i
                continue
            if first_p[i * s_first] > first_p[best * s_first]:
                best = i
    return best


def splice_nominations(const int64_t[:] rows, const int64_t[:] prios, const int64_t[:, :] vectors,
                       object[:] uids, object[:] names, const int64_t[:] gone,
                       const int64_t[:] rows2, const int64_t[:] prios2, const int64_t[:, :] vectors2,
                       object[:] uids2, object[:] names2):
    """The nomination arrays (``NominationIndex``: rows, priorities, requests, uids, node names)
    without the pods on the rows ``gone``, followed by the second set's pods, in one pass per
    array: ``(rows, prios, vectors, uids, names, new_pos)``, ``new_pos[q]`` the new index of old
    pod ``q`` (-1 when dropped). None when no pod is dropped and the second set is empty (the
    arrays stay as they are). ``gone`` holds a few rows (each pod is compared with each)."""
    cdef Py_ssize_t q = rows.shape[0], q2 = rows2.shape[0], ng = gone.shape[0]
    cdef Py_ssize_t width = vectors.shape[1]
    cdef Py_ssize_t i, j, g, t, kept = 0, n
    cdef int64_t r
    if (prios.shape[0] != q or vectors.shape[0] != q or uids.shape[0] != q or names.shape[0] != q
            or prios2.shape[0] != q2 or vectors2.shape[0] != q2 or uids2.shape[0] != q2
            or names2.shape[0] != q2 or (q2 and vectors2.shape[1] != width)):
        raise ValueError("splice_nominations: the arrays differ in length or width")
    new_pos_a = np.empty(q, dtype=np.int64)
    cdef int64_t[::1] new_pos = new_pos_a
    with nogil:
        for i in range(q):
            r = rows[i]
            new_pos[i] = kept
            for g in range(ng):
                if gone[g] == r:
                    new_pos[i] = -1
                    break
            if new_pos[i] >= 0:
                kept += 1
    if kept == q and q2 == 0:
        return None
    n = kept + q2
    out_rows_a = np.empty(n, dtype=np.int64)
    out_prios_a = np.empty(n, dtype=np.int64)
    out_vec_a = np.empty((n, width), dtype=np.int64)
    out_uids_a = np.empty(n, dtype=object)
    out_names_a = np.empty(n, dtype=object)
    cdef int64_t[::1] out_rows = out_rows_a
    cdef int64_t[::1] out_prios = out_prios_a
    cdef int64_t[:, ::1] out_vec = out_vec_a
    cdef object[::1] out_uids = out_uids_a
    cdef object[::1] out_names = out_names_a
    for i in range(q):
        j = new_pos[i]
        if j < 0:
            continue
        out_rows[j] = rows[i]
        out_prios[j] = prios[i]
        for t in range(width):
            out_vec[j, t] = vectors[i, t]
        out_uids[j] = uids[i]
        out_names[j] = names[i]
    for i in range(q2):
        j = kept + i
        out_rows[j] = rows2[i]
        out_prios[j] = prios2[i]
        for t in range(width):
            out_vec[j, t] = vectors2[i, t]
        out_uids[j] = uids2[i]
        out_names[j] = names2[i]
    return out_rows_a, out_prios_a, out_vec_a, out_uids_a, out_names_a, new_pos_a


def walk_stop(kind_, n_violating_, int64_t nv_total, int64_t v_total, int64_t k, int8_t candidate):
    """DryRunPreemption's stopping rule over one window of the walk: node ``i`` is a candidate when
    ``kind[i] == candidate`` (non-violating when ``n_violating[i] == 0``); the lists, each capped at
    ``k`` (numCandidates), hold ``nv_total`` and ``v_total`` candidates before the window. Returns
    ``(stop, nv, v)``: the position of the first candidate after whose addition the capped counts
    have a non-violating one and reach ``k`` together (-1 when none does), and the uncapped
    counts up to it (or over the whole window)."""
    # (arrays checked as the memoryviews this took were, without a buffer acquisition each: see select_victims)
    cdef cnp.ndarray a_kind = vector(kind_, cnp.NPY_INT8, False, True, "walk_stop kind")
    cdef cnp.ndarray a_nv = vector(n_violating_, cnp.NPY_INT64, False, True, "walk_stop n_violating")
    cdef const int8_t* kind = <const int8_t*>cnp.PyArray_DATA(a_kind)
    cdef const int64_t* n_violating = <const int64_t*>cnp.PyArray_DATA(a_nv)
    cdef Py_ssize_t i, n = cnp.PyArray_DIM(a_kind, 0), stop = -1
    cdef int64_t cnv, cv
    if cnp.PyArray_DIM(a_nv, 0) != n:
        raise ValueError("walk_stop: kind and n_violating differ in length")
    with nogil:
        for i in range(n):
            if kind[i] != candidate:
                continue
            if n_violating[i] == 0:
                nv_total += 1
            else:
                v_total += 1
            cnv = nv_total if nv_total < k else k
            cv = v_total if v_total < k else k
            if cnv > 0 and cnv + cv >= k:
                stop = i
                break
    return stop, nv_total, v_total


def collect_positions(kind_, code_, n_violating_, Py_ssize_t end, int64_t k, int8_t candidate, int8_t no_victim_left, int8_t error):
    """The walk's positions below ``end``, for the dry run's result: ``chosen`` (the first ``k``
    non-violating candidates, then the first ``k`` violating ones, each in walk order), ``others``
    (the positions that are no candidate) and ``errors`` (those of kind ``no_victim_left`` or code
    ``error``), as int64 arrays."""
    # (arrays checked as the memoryviews this took were, without a buffer acquisition each: see select_victims)
    cdef cnp.ndarray a_kind = vector(kind_, cnp.NPY_INT8, False, True, "collect_positions kind")
    cdef cnp.ndarray a_code = vector(code_, cnp.NPY_INT8, False, True, "collect_positions code")
    cdef cnp.ndarray a_nv = vector(n_violating_, cnp.NPY_INT64, False, True, "collect_positions n_violating")
    cdef const int8_t* kind = <const int8_t*>cnp.PyArray_DATA(a_kind)
    cdef const int8_t* code = <const int8_t*>cnp.PyArray_DATA(a_code)
    cdef const int64_t* n_violating = <const int64_t*>cnp.PyArray_DATA(a_nv)
    cdef Py_ssize_t i, a = 0, b = 0, c = 0, e = 0
    cdef int64_t nv = 0, v = 0
    if (end < 0 or end > cnp.PyArray_DIM(a_kind, 0) or end > cnp.PyArray_DIM(a_code, 0)
            or end > cnp.PyArray_DIM(a_nv, 0)):
        raise ValueError("collect_positions: end outside the arrays")
    for i in range(end):
        if kind[i] == candidate:
            if n_violating[i] == 0:
                nv += 1
            else:
                v += 1
    cdef int64_t n_nv = nv if nv < k else k
    cdef int64_t n_v = v if v < k else k
    cdef cnp.ndarray chosen_a = np.empty(n_nv + n_v, dtype=np.int64)
    cdef cnp.ndarray others_a = np.empty(end - nv - v, dtype=np.int64)
    cdef int64_t* chosen = <int64_t*>cnp.PyArray_DATA(chosen_a)
    cdef int64_t* others = <int64_t*>cnp.PyArray_DATA(others_a)
    cdef Py_ssize_t n_err = 0
    for i in range(end):
        if kind[i] == no_victim_left or code[i] == error:
            n_err += 1
    cdef cnp.ndarray errors_a = np.empty(n_err, dtype=np.int64)
    cdef int64_t* errors = <int64_t*>cnp.PyArray_DATA(errors_a)
    with nogil:
        for i in range(end):
            if kind[i] == candidate:
                if n_violating[i] == 0:
                    if a < n_nv:
                        chosen[a] = i
                        a += 1
                elif b < n_v:
                    chosen[n_nv + b] = i
                    b += 1
            else:
                others[c] = i
                c += 1
            if kind[i] == no_victim_left or code[i] == error:
                errors[e] = i
                e += 1
    return chosen_a, others_a, errors_a


def first_rows(rows_):
    """Each row of ``rows`` (non-negative) once, where it first appears, as an intp array (the
    compiled cycle's nominated rows: ``list(dict.fromkeys(rows))`` in one pass)."""
    # (arrays checked as the memoryviews this took were, without a buffer acquisition each: see select_victims)
    cdef cnp.ndarray a_rows = vector(rows_, cnp.NPY_INT64, False, True, "first_rows rows")
    cdef const int64_t* rows = <const int64_t*>cnp.PyArray_DATA(a_rows)
    cdef Py_ssize_t i, n = cnp.PyArray_DIM(a_rows, 0), m = 0
    cdef int64_t r, top = -1
    for i in range(n):
        r = rows[i]
        if r < 0:
            raise ValueError(f"first_rows: negative row {r}")
        if r > top:
            top = r
    cdef cnp.ndarray out_a = np.empty(n, dtype=np.intp)
    cdef Py_ssize_t* out = <Py_ssize_t*>cnp.PyArray_DATA(out_a)
    cdef uint8_t* seen = <uint8_t*> malloc(top + 2)
    if seen == NULL:
        raise MemoryError()
    with nogil:
        for i in range(top + 2):
            seen[i] = 0
        for i in range(n):
            r = rows[i]
            if not seen[r]:
                seen[r] = 1
                out[m] = r
                m += 1
    free(seen)
    return out_a[:m]


def stale_rows(rows_, have_, want_):
    """The rows ``r`` of ``rows`` (in order) with ``have[r] != want[r]``: the pod columns' rows
    loaded at another table version than the table's (``PodColumns.refresh``)."""
    # (arrays checked as the memoryviews this took were, without a buffer acquisition each: see select_victims)
    cdef cnp.ndarray a_rows = vector(rows_, cnp.NPY_INT64, False, True, "stale_rows rows")
    cdef cnp.ndarray a_have = vector(have_, cnp.NPY_INT64, False, False, "stale_rows have")
    cdef cnp.ndarray a_want = vector(want_, cnp.NPY_INT64, False, False, "stale_rows want")
    cdef const int64_t* rows = <const int64_t*>cnp.PyArray_DATA(a_rows)
    cdef const int64_t* have = <const int64_t*>cnp.PyArray_DATA(a_have)
    cdef const int64_t* want = <const int64_t*>cnp.PyArray_DATA(a_want)
    cdef Py_ssize_t have_s = stride_of(a_have), want_s = stride_of(a_want)
    cdef Py_ssize_t i, n = cnp.PyArray_DIM(a_rows, 0), m = 0
    cdef int64_t r
    for i in range(n):
        r = rows[i]
        if r < 0 or r >= cnp.PyArray_DIM(a_have, 0) or r >= cnp.PyArray_DIM(a_want, 0):
            raise IndexError(f"stale_rows: row {r} outside the arrays")
    cdef cnp.ndarray out_a = np.empty(n, dtype=np.int64)
    cdef int64_t* out = <int64_t*>cnp.PyArray_DATA(out_a)
    with nogil:
        for i in range(n):
            r = rows[i]
            if have[r * have_s] != want[r * want_s]:
                out[m] = r
                m += 1
    return out_a[:m]


def rows_by_rank(rows_, rank_, live_):
    """``rows`` ordered by ``rank[row]`` (a stable sort: equal ranks keep their order), or None when
    a row is not ``live`` (DefaultPreemption's potential nodes in the snapshot's order). Ranks
    must be non-negative."""
    # (arrays checked as the memoryviews this took were, without a buffer acquisition each: see select_victims)
    cdef cnp.ndarray a_rows = vector(rows_, cnp.NPY_INT64, False, True, "rows_by_rank rows")
    cdef cnp.ndarray a_rank = vector(rank_, cnp.NPY_INT64, False, True, "rows_by_rank rank")
    cdef cnp.ndarray a_live = vector(live_, cnp.NPY_UINT8, False, True, "rows_by_rank live")
    cdef const int64_t* rows = <const int64_t*>cnp.PyArray_DATA(a_rows)
    cdef const int64_t* rank = <const int64_t*>cnp.PyArray_DATA(a_rank)
    cdef const uint8_t* live = <const uint8_t*>cnp.PyArray_DATA(a_live)
    cdef Py_ssize_t i, n = cnp.PyArray_DIM(a_rows, 0)
    cdef int64_t r, key, top = 0, prev = -1
    # descents: positions where the rank goes down; split: the last one. The potential nodes come
    # in the failing cycle's order, the snapshot's rotated to its start index: at most one descent,
    # and the rows are then that rotation undone (no counting sort over every rank).
    cdef Py_ssize_t descents = 0, split = 0
    for i in range(n):
        r = rows[i]
        if r < 0 or r >= cnp.PyArray_DIM(a_rank, 0) or r >= cnp.PyArray_DIM(a_live, 0):
            raise IndexError(f"rows_by_rank: row {r} outside the arrays")
        if not live[r]:
            return None
        key = rank[r]
        if key < 0:
            raise ValueError(f"rows_by_rank: negative rank {key}")
        if key > top:
            top = key
        if key < prev:
            descents += 1
            split = i
        prev = key
    cdef cnp.ndarray out_a = np.empty(n, dtype=np.int64)
    cdef int64_t* out = <int64_t*>cnp.PyArray_DATA(out_a)
    if descents == 0 or (descents == 1 and rank[rows[n - 1]] < rank[rows[0]]):
        # sorted, or sorted once rotated at ``split`` (strictly: a rank equal across the seam
        # would keep its input order in the stable sort, which the rotation would not)
        with nogil:
            for i in range(split, n):
                out[i - split] = rows[i]
            for i in range(split):
                out[n - split + i] = rows[i]
        return out_a
    cdef int64_t* start = <int64_t*> malloc((top + 2) * sizeof(int64_t))
    if start == NULL:
        raise MemoryError()
    with nogil:
        for i in range(top + 2):
            start[i] = 0
        for i in range(n):
            start[rank[rows[i]] + 1] += 1
        for i in range(1, top + 2):
            start[i] += start[i - 1]
        for i in range(n):
            r = rows[i]
            key = rank[r]
            out[start[key]] = r
            start[key] += 1
    free(start)
    return out_a


def window_fit(seg_, rows_, count_, allowed_, alloc_, used_, cols_, wants_, bint check_fit,
               kind_, active_, int8_t candidate, int8_t filtered, int8_t no_victims):
    """The dry-run window's outcome before the victims' selection when NodeResourcesFit is the only
    filter left to judge (the node-only ones known to pass, no port check): node ``w`` with no
    potential victim (``seg[w] == seg[w + 1]``) is ``no_victims``; else, once they are gone, it
    fits (:func:`fit_verdicts`' checks, with ``check_fit``) as ``candidate`` with ``active[w] =
    1``, or not as ``filtered``. Writes every ``kind[w]`` and ``active[w]``; returns how many are
    candidates."""
    # checked as the typed memoryviews it took were (dtype, native order, 1-d C-contiguous; alloc
    # and used 2-d, any strides), without a buffer acquisition each
    cdef cnp.ndarray a_seg = vector(seg_, cnp.NPY_INT64, False, True, "window_fit seg")
    cdef cnp.ndarray a_rows = vector(rows_, cnp.NPY_INT64, False, True, "window_fit rows")
    cdef cnp.ndarray a_count = vector(count_, cnp.NPY_INT64, False, True, "window_fit count")
    cdef cnp.ndarray a_allowed = vector(allowed_, cnp.NPY_INT64, False, True, "window_fit allowed")
    cdef cnp.ndarray a_alloc = matrix(alloc_, cnp.NPY_INT64, False, False, "window_fit alloc")
    cdef cnp.ndarray a_used = matrix(used_, cnp.NPY_INT64, False, False, "window_fit used")
    cdef cnp.ndarray a_cols = vector(cols_, cnp.NPY_INT64, False, True, "window_fit cols")
    cdef cnp.ndarray a_wants = vector(wants_, cnp.NPY_INT64, False, True, "window_fit wants")
    cdef cnp.ndarray a_kind = vector(kind_, cnp.NPY_INT8, True, True, "window_fit kind")
    cdef cnp.ndarray a_active = vector(active_, cnp.NPY_UINT8, True, True, "window_fit active")
    cdef const int64_t* seg = <const int64_t*>cnp.PyArray_DATA(a_seg)
    cdef const int64_t* rows = <const int64_t*>cnp.PyArray_DATA(a_rows)
    cdef const int64_t* count = <const int64_t*>cnp.PyArray_DATA(a_count)
    cdef const int64_t* allowed = <const int64_t*>cnp.PyArray_DATA(a_allowed)
    cdef const int64_t* alloc = <const int64_t*>cnp.PyArray_DATA(a_alloc)
    cdef const int64_t* used = <const int64_t*>cnp.PyArray_DATA(a_used)
    cdef const int64_t* cols = <const int64_t*>cnp.PyArray_DATA(a_cols)
    cdef const int64_t* wants = <const int64_t*>cnp.PyArray_DATA(a_wants)
    cdef int8_t* kind = <int8_t*>cnp.PyArray_DATA(a_kind)
    cdef uint8_t* active = <uint8_t*>cnp.PyArray_DATA(a_active)
    cdef Py_ssize_t alloc_s0 = stride_of_dim(a_alloc, 0), alloc_s1 = stride_of_dim(a_alloc, 1)
    cdef Py_ssize_t used_s0 = stride_of_dim(a_used, 0), used_s1 = stride_of_dim(a_used, 1)
    cdef Py_ssize_t nw = cnp.PyArray_DIM(a_rows, 0), nk = cnp.PyArray_DIM(a_cols, 0)
    cdef Py_ssize_t w, j, n_cand = 0
    cdef int64_t r, c
    cdef bint ok
    if (cnp.PyArray_DIM(a_seg, 0) != nw + 1 or cnp.PyArray_DIM(a_count, 0) != nw
            or cnp.PyArray_DIM(a_used, 0) != nw or cnp.PyArray_DIM(a_kind, 0) != nw
            or cnp.PyArray_DIM(a_active, 0) != nw or cnp.PyArray_DIM(a_wants, 0) != nk):
        raise ValueError("window_fit: shapes do not match")
    # the bounds the pass reads unchecked (as _check_fit_inputs)
    for w in range(nw):
        r = rows[w]
        if r < 0 or r >= cnp.PyArray_DIM(a_allowed, 0) or r >= cnp.PyArray_DIM(a_alloc, 0):
            raise IndexError(f"window_fit: row {r} outside the table")
    for j in range(nk):
        if cols[j] >= cnp.PyArray_DIM(a_alloc, 1) or cols[j] >= cnp.PyArray_DIM(a_used, 1):
            raise IndexError(f"window_fit: column {cols[j]} outside the table")
    with nogil:
        for w in range(nw):
            active[w] = 0
            if seg[w + 1] == seg[w]:
                kind[w] = no_victims
                continue
            ok = True
            if check_fit:  # _fits_without_victims: "Too many pods", then each check's free amount
                r = rows[w]
                if count[w] + 1 > allowed[r]:
                    ok = False
                else:
                    for j in range(nk):
                        c = cols[j]
                        if wants[j] > ((alloc[r * alloc_s0 + c * alloc_s1] - used[w * used_s0 + c * used_s1])
                                       if c >= 0 else 0):
                            ok = False
                            break
            if ok:
                kind[w] = candidate
                active[w] = 1
                n_cand += 1
            else:
                kind[w] = filtered
    return n_cand
