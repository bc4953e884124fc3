# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The fused scheduling-cycle kernel: Filter, Score, NormalizeScore, weights and selectHost in one pass.

A :class:`FusedPlan` holds what one pod spec needs (built once per spec and node-set version by
``fastsched.runtime.compiled_cycle``); :meth:`FusedPlan.run` then takes the table's current columns
and the nodes in upstream's order and, from the round-robin start:

1. filters nodes in order: ``static_ok[row]`` (every Filter that depends only on the pod and the
   nodes, AND-ed) and NodeResourcesFit's checks on the live ``requested`` / ``pod_count`` columns,
   stopping at the (k+1)-th feasible node as upstream does (that node is neither kept nor counted);
2. scores the first k feasible nodes: static raw columns gathered at their rows, normalized over
   those nodes (upstream ``DefaultNormalizeScore``, plain or reversed), and the resource scorers
   (``_arith.resource_score``, the same arithmetic as the plugins' own kernels), each weighted by its
   plugin weight with upstream's [0, 100] range check;
3. keeps the running maximum total, its tie count and the positions of its ties for selectHost
   (:meth:`FusedPlan.place` picks the drawn one by index).

With :meth:`FusedPlan.enable_score_cache`, the weighted sum of the resource scorers' scores of each
row is kept and reused while the row is unchanged: a resource score depends only on the row's
``alloc`` / ``requested`` / ``nonzero`` columns and the plan's constants, and the table logs the row
in its changed-rows log whenever one of them changes (with its ``row_version``: ``_table.pyx``'s
module docstring). A plan remembers the log position it last read and, at a cycle's start, empties
the entries of the rows logged since (:meth:`FusedPlan._sync`); the walk then reads a row's entry
alone, not its ``row_version`` beside it. Pods of one spec compute the scores of the rows that
changed since the spec last saw them (about one per bind) instead of every row scored, and a cached
row costs one load and one add in the totals (its scores were range-checked when computed; a row
with a score out of [0, 100] is not cached, so it is checked every cycle).

Shapes: ``C`` table rows, ``S`` static score columns, ``Q`` resource scorers, ``J`` configured
resources over all scorers, ``k`` nodes to find. All int64 unless stated.
"""
import numpy as np

from libc.stdint cimport INT64_MIN, int32_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport free, malloc

from cython.parallel cimport prange

from fastsched._kernels cimport _tie
from fastsched._kernels._tie cimport bitgen_t
from fastsched._kernels._arith cimport (KIND_BALANCED, KIND_LEAST_ALLOCATED, KIND_MOST_ALLOCATED,
                                        NORMALIZE_DEFAULT, NORMALIZE_DEFAULT_REVERSE, MAX_NODE_SCORE,
                                        default_normalize, fit_fails, resource_score)

#: Normalization modes of a static score column (``static_mode``).
NORMALIZE_NONE_MODE = 0
NORMALIZE_DEFAULT_MODE = NORMALIZE_DEFAULT
NORMALIZE_REVERSE_MODE = NORMALIZE_DEFAULT_REVERSE
#: Windows of at least this many feasible nodes are scored on ``n_threads`` OpenMP threads; below
#: it, waking the workers costs more than it saves.
PARALLEL_MIN_NODES = 16384
#: The filter walk and the scoring release the GIL only for at least this many nodes to find or
#: score (or a walk over 16 times as many): below it a pass takes a few µs, and the GIL's release
#: and re-acquisition (a condition variable's signal each) are a measurable part of it, with no
#: other thread to run meanwhile in the scheduler's loop.
cdef enum:
    NOGIL_MIN_NODES = 4096
#: A score cache entry's value when it holds NodeResourcesFit's verdict on the row (see ``_walk``)
#: and no total: the row fits, its total not computed yet / the row does not fit. A cached total
#: is >= 0 (scores in [0, 100] times positive weights), so neither is a total.
#:
#: An entry is one int64: ``value + 2`` (>= 0), -1 when empty. It is valid while the row is not
#: logged as changed after it was made: :meth:`FusedPlan._sync` empties the entries of the rows the
#: table logged since the plan last read its log (all of them for another log, or one the plan
#: fell more than its size behind). A total above ``_MAX_TOTAL`` is not cached (computed every cycle).
cdef enum:
    _FITS_UNSCORED = -1
    _NO_FIT = -2
cdef int64_t _MAX_TOTAL = (<int64_t>1) << 62
#: :meth:`FusedPlan.run` status: a normalized score left [0, 100] (the caller takes the slow path,
#: which reports upstream's error).
SCORE_OUT_OF_RANGE = -1
#: :meth:`FusedPlan.place` rows that are no node: no feasible node, a score out of range (as
#: :meth:`FusedPlan.run`'s statuses, the caller takes the slow path), and ties the caller draws
#: (no bit generator given, or more ties than ``_tie.max_ties()``)
PLACE_NONE_FEASIBLE = -1
PLACE_OUT_OF_RANGE = -2
PLACE_DRAW_TIES = -3
#: Bytes a table row costs in a plan's score cache: its weighted resource total or fit verdict
#: (8) and its block of the node order (4, see BLOCK_NODES)
CACHE_ROW_BYTES = 12
#: :meth:`FusedPlan.place` summarizes the node order in blocks of this many positions (aligned:
#: positions ``b * BLOCK_NODES`` to ``(b + 1) * BLOCK_NODES - 1``): per block the count of its
#: feasible nodes, their best cached total and that total's count, valid while every node of the
#: block has a cached verdict or total. A walk over a valid block it takes whole adds the three
#: instead of visiting its nodes (see ``FusedPlan._place_blocks``).
cdef enum:
    _BLOCK_SHIFT = 5
    _BLOCK = 1 << _BLOCK_SHIFT
BLOCK_NODES = _BLOCK
#: Bytes a block costs in a plan's score cache: its summary (3 int64) and the walk's scratch (3 int64)
CACHE_BLOCK_BYTES = 48


def cache_nbytes(Py_ssize_t capacity):
    """The bytes of a score cache for ``capacity`` table rows (:attr:`FusedPlan.score_cache_nbytes`)."""
    return capacity * CACHE_ROW_BYTES + ((capacity + BLOCK_NODES - 1) >> _BLOCK_SHIFT) * CACHE_BLOCK_BYTES


cdef inline int64_t _cached_fit(int64_t r, int64_t* cache_p, const int64_t* pod_count_p,
                                const int64_t* allowed_p, const int64_t* alloc_p, Py_ssize_t alloc_stride,
                                const int64_t* requested_p, Py_ssize_t requested_stride,
                                const int64_t* fit_cols_p, const int64_t* fit_wants_p,
                                Py_ssize_t n_fit) noexcept nogil:
    """Row ``r``'s NodeResourcesFit verdict through the plan's score cache (see ``_walk``): its
    entry's value when it has one (a cached total, ``_FITS_UNSCORED`` or ``_NO_FIT``), else the
    verdict checked on the row and kept in the entry (``_NO_FIT`` or ``_FITS_UNSCORED``)."""
    cdef int64_t e = cache_p[r]
    if e >= 0:
        return e - 2
    if fit_fails(pod_count_p[r], allowed_p[r], alloc_p + r * alloc_stride, requested_p + r * requested_stride,
                 fit_cols_p, fit_wants_p, n_fit):
        cache_p[r] = _NO_FIT + 2
        return _NO_FIT
    cache_p[r] = _FITS_UNSCORED + 2
    return _FITS_UNSCORED


cdef inline Py_ssize_t _walk(const int64_t* order_p, Py_ssize_t n, Py_ssize_t start, Py_ssize_t k,
                             Py_ssize_t i0, Py_ssize_t i1, Py_ssize_t found, Py_ssize_t* examined, int64_t* sel,
                             const uint8_t* static_ok_p, const uint8_t* cycle_ok_p, const int64_t* pod_count_p,
                             const int64_t* allowed_p, const int64_t* alloc_p, Py_ssize_t alloc_stride,
                             const int64_t* requested_p, Py_ssize_t requested_stride, const int64_t* fit_cols_p,
                             const int64_t* fit_wants_p, Py_ssize_t n_fit, int64_t* cache_p,
                             int64_t* hint_p) noexcept nogil:
    """:meth:`FusedPlan._filter`'s walk (step 1 of :meth:`FusedPlan.run`), in node order from the
    start up to the (k+1)-th feasible node: returns the count found, sets ``examined`` at that node's
    position. A NULL mask or fit column pointer is a check the plan does not make. A function of its
    own so that the caller can run it with the GIL held (see NOGIL_MIN_NODES).

    ``cache_p`` (the plan's score cache, synced with the table's changed-rows log, or NULL):
    NodeResourcesFit's verdict on a row is kept in the row's cache entry (``_FITS_UNSCORED`` /
    ``_NO_FIT`` in place of the total) and reused while the row is unchanged: the verdict depends
    only on the row's ``pod_count`` / ``allowed_pods`` / ``alloc`` / ``requested`` and the plan's
    constants, and the table logs the row whenever one of them changes. A node then costs one load
    (its 8-byte cache entry) instead of four rows. ``hint_p`` (with ``cache_p``, or NULL): the
    found node's entry's value is written there (its cached total, or a negative verdict
    when none), so that the scoring that follows in the same call reads the cached totals in order
    instead of testing the cache again (``FusedPlan._hinted``)."""
    cdef Py_ssize_t i, p
    cdef int64_t r, h = 0
    for i in range(i0, i1):
        p = start + i
        if p >= n:
            p -= n
        r = order_p[p]
        if static_ok_p != NULL and not static_ok_p[r]:
            continue
        if cycle_ok_p != NULL and not cycle_ok_p[r]:
            continue
        if pod_count_p != NULL:
            if cache_p != NULL:
                h = _cached_fit(r, cache_p, pod_count_p, allowed_p, alloc_p, alloc_stride, requested_p,
                                requested_stride, fit_cols_p, fit_wants_p, n_fit)
                if h == _NO_FIT:
                    continue
            elif fit_fails(pod_count_p[r], allowed_p[r], alloc_p + r * alloc_stride,
                           requested_p + r * requested_stride, fit_cols_p, fit_wants_p, n_fit):
                continue
        if found == k:
            examined[0] = i
            break
        sel[found] = r
        if hint_p != NULL:
            hint_p[found] = h
        found += 1
    return found


cdef class TableColumns:
    """The table columns the pass reads, bound once and re-bound when the table reallocates them."""

    cdef const int64_t[::1] pod_count       # (C,)
    cdef const int64_t[::1] allowed_pods    # (C,)
    cdef const int64_t[:, ::1] alloc        # (C, R)
    cdef const int64_t[:, ::1] requested    # (C, R)
    cdef const int64_t[:, ::1] nonzero      # (C, 2)
    # the table's changed-rows log (``_table.pyx``): its rows (L,), its position (1,), and the
    # position's array, whose identity is the log's
    cdef const int64_t[::1] change_rows
    cdef const int64_t[::1] change_pos
    cdef object change_log
    cdef object _arrays
    # the last node order :meth:`FusedPlan.place` walked and its view: the snapshot hands out one
    # read-only array until the node set changes, so a cycle reuses the view (an identity test)
    # where a ``const int64_t[::1]`` argument acquires the array's buffer on every call
    cdef object _order_obj
    cdef const int64_t[::1] _order

    def __init__(self, table):
        self.bind(table)

    cdef inline const int64_t[::1] order_view(self, object order):
        if order is not self._order_obj:
            self._order = order
            self._order_obj = order
        return self._order

    cpdef bint bind(self, table):
        """Bind ``table``'s current arrays; returns False when they were already bound."""
        cdef tuple old = self._arrays
        if (old is not None and old[0] is table.pod_count and old[1] is table.allowed_pods
                and old[2] is table.alloc and old[3] is table.requested and old[4] is table.nonzero_requested
                and old[5] is table._change_pos):
            return False
        arrays = (table.pod_count, table.allowed_pods, table.alloc, table.requested, table.nonzero_requested,
                  table._change_pos, table._change_rows)
        if arrays[6].shape[0] & (arrays[6].shape[0] - 1) or arrays[5].shape[0] != 1:
            raise ValueError("the changed-rows log needs a power-of-two size and one position")
        self.pod_count, self.allowed_pods, self.alloc, self.requested, self.nonzero, self.change_pos, \
            self.change_rows = arrays
        self.change_log = arrays[5]
        self._arrays = arrays
        return True


cdef class FusedPlan:
    """One pod spec's compiled Filter and Score (see the module docstring).

    ``static_ok``: (C,) uint8, or None when every row passes. ``fit_cols`` / ``fit_wants``: (K,)
    NodeResourcesFit checks (column -1: no node has the resource), or None without that Filter.
    ``static_raw``: (S, C) raw scores per row; ``static_mode`` (S,) normalization; ``static_weight``
    (S,) plugin weights; ``offset``: the weighted score of plugins whose score is the same on every
    node (added to each total). Resource scorer ``q`` uses entries ``rs_off[q]:rs_off[q+1]`` of the (J,)
    arrays and shape points ``rs_shape_off[q]:rs_shape_off[q+1]``.
    """

    cdef bint has_static_ok, check_fit
    cdef const uint8_t[::1] static_ok
    cdef const int64_t[::1] fit_cols, fit_wants
    cdef Py_ssize_t n_static, n_rs, max_res
    cdef const int64_t[:, ::1] static_raw
    cdef const int64_t[::1] static_mode, static_weight
    cdef const int64_t[::1] rs_kind, rs_weight, rs_off, rs_shape_off
    cdef const int64_t[::1] rs_alloc_cols, rs_used_cols, rs_requests, rs_res_weights, rs_shape_u, rs_shape_s
    cdef const uint8_t[::1] rs_used_nonzero
    cdef int64_t[::1] _sel, _totals, _pos
    # (k,): the positions of the found nodes with the best total, in order (the last scoring's
    # first ``ties``): selectHost's draw picks one by index instead of scanning the totals
    cdef int64_t[::1] _best_pos
    # (S + Q + 1, k): the static columns' raw (then normalized) scores, the resource scorers' scores
    # of the found nodes computed this cycle, and each found node's weighted resource total
    cdef int64_t[:, ::1] _scores
    cdef bint _caching
    # whether the rs totals row of ``_scores`` holds the walk's hints (see ``_walk``) for the
    # found nodes: set by a walk of place / place_run / run with scores, whose scoring follows in
    # the same call with no write to the table in between; False after any other walk
    cdef bint _hinted
    # (C,) per row: the cached value (the weighted sum of the resource scorers' scores, or the
    # walk's fit verdict) plus 2, -1 when none (see _FITS_UNSCORED); valid as of the table's
    # changed-rows log ``_log`` at position ``_log_read`` (see _sync). The walk streams 8 bytes a
    # node of it (at 50,000 nodes the cache is 0.4 MB) and no row_version
    cdef int64_t[::1] _cache
    cdef object _log
    cdef int64_t _log_read
    cdef Py_ssize_t _capacity
    cdef int64_t offset
    cdef object _keep
    cdef double* _fractions                 # (max_res,) scratch of a single-threaded scoring
    # The block summaries of the node order ``_blk_order`` (see BLOCK_NODES; allocated with the
    # cache, rebuilt for another order): ``_blk_of_row`` (C,) int32, the block of each row's position
    # (-1: not in the order); ``_blk`` (NB, 3) int64 per block: the count of its feasible nodes (-1:
    # no valid summary), their best cached total, and how many have it. A valid block's every row
    # passing ``static_ok`` has a final cache entry (a total, or ``_NO_FIT``): entries are emptied
    # only by :meth:`_sync`, which marks the rows' blocks invalid, and written only when not final
    # (the walk fills empty entries, the scoring writes totals over ``_FITS_UNSCORED``); so a valid
    # summary is the one its rows' entries give. ``_blk_seq`` (NB + 1, 2): the blocks a walk took
    # whole, in order, each with the count of nodes it had visited one by one before it;
    # ``_blk_todo`` (NB,): the invalid blocks a walk reached the start of (rebuilt after it).
    cdef int32_t[::1] _blk_of_row
    cdef int64_t[:, ::1] _blk
    cdef int64_t[:, ::1] _blk_seq
    cdef int64_t[::1] _blk_todo
    cdef object _blk_order
    cdef bint _blk_ready                    # _blk_of_row maps _blk_order's rows, and _blk is theirs

    def __init__(self, static_ok, fit_cols, fit_wants, static_raw, static_mode, static_weight,
                 rs_kind, rs_weight, rs_off, rs_alloc_cols, rs_used_cols, rs_used_nonzero, rs_requests,
                 rs_res_weights, rs_shape_off, rs_shape_u, rs_shape_s, int64_t offset=0):
        cdef Py_ssize_t q
        self._keep = (static_ok, fit_cols, fit_wants, static_raw)
        self.offset = offset
        self.has_static_ok = static_ok is not None
        if self.has_static_ok:
            self.static_ok = static_ok
        self.check_fit = fit_cols is not None
        if self.check_fit:
            self.fit_cols = fit_cols
            self.fit_wants = fit_wants
            if fit_cols.shape[0] != fit_wants.shape[0]:
                raise ValueError("fit_cols and fit_wants differ in length")
        self.static_raw = static_raw
        self.static_mode = static_mode
        self.static_weight = static_weight
        self.n_static = static_raw.shape[0]
        if static_mode.shape[0] != self.n_static or static_weight.shape[0] != self.n_static:
            raise ValueError("static_mode and static_weight need one entry per static column")
        self.rs_kind = rs_kind
        self.rs_weight = rs_weight
        self.rs_off = rs_off
        self.rs_alloc_cols = rs_alloc_cols
        self.rs_used_cols = rs_used_cols
        self.rs_used_nonzero = rs_used_nonzero
        self.rs_requests = rs_requests
        self.rs_res_weights = rs_res_weights
        self.rs_shape_off = rs_shape_off
        self.rs_shape_u = rs_shape_u
        self.rs_shape_s = rs_shape_s
        self.n_rs = rs_kind.shape[0]
        if rs_off.shape[0] != self.n_rs + 1 or rs_shape_off.shape[0] != self.n_rs + 1:
            raise ValueError("rs_off and rs_shape_off need Q + 1 entries")
        self.max_res = 1
        for q in range(self.n_rs):
            if rs_off[q + 1] - rs_off[q] > self.max_res:
                self.max_res = rs_off[q + 1] - rs_off[q]
        self._fractions = <double*> malloc(self.max_res * sizeof(double))
        if self._fractions == NULL:
            raise MemoryError()
        self._ensure(128)

    def __dealloc__(self):
        free(self._fractions)

    cdef void _ensure(self, Py_ssize_t k):
        if self._capacity >= k:
            return
        self._capacity = k
        self._sel = np.empty(k, dtype=np.int64)
        self._totals = np.empty(k, dtype=np.int64)
        self._pos = np.empty(k, dtype=np.int64)
        self._best_pos = np.empty(k, dtype=np.int64)
        self._scores = np.empty((self.n_static + self.n_rs + 1, k), dtype=np.int64)

    def enable_score_cache(self, Py_ssize_t capacity):
        """Keep the resource scorers' weighted total per row for ``capacity`` rows (see the module
        docstring); costs ``CACHE_ROW_BYTES`` (8) bytes a row. Returns whether the plan has any to
        keep."""
        if self.n_rs == 0:
            return False
        cdef Py_ssize_t nb = (capacity + _BLOCK - 1) >> _BLOCK_SHIFT
        if not self._caching or self._cache.shape[0] < capacity:
            self._cache = np.full(capacity, -1, dtype=np.int64)
            self._blk_of_row = np.full(capacity, -1, dtype=np.int32)
            self._blk = np.full((nb, 3), -1, dtype=np.int64)
            self._blk_seq = np.empty((nb + 1, 2), dtype=np.int64)
            self._blk_todo = np.empty(nb, dtype=np.int64)
            self._blk_order = None
            self._blk_ready = False
            self._caching = True
            self._log = None  # (the next _sync reads the table's log from its current position)
        return True

    def drop_score_cache(self):
        """Free the score cache (scores are computed for every row again)."""
        self._caching = False
        self._cache = np.empty(0, dtype=np.int64)
        self._blk_of_row = np.empty(0, dtype=np.int32)
        self._blk = self._blk_seq = np.empty((0, 3), dtype=np.int64)
        self._blk_todo = np.empty(0, dtype=np.int64)
        self._blk_order = None
        self._blk_ready = False
        self._log = None

    @property
    def score_cache_nbytes(self):
        """The memory the score cache holds, in bytes (0 without one)."""
        if not self._caching:
            return 0
        return cache_nbytes(self._cache.shape[0])

    @property
    def block_summaries(self):
        """(NB, 3) int64 copy of the block summaries of the order :meth:`place` walked last (see
        BLOCK_NODES: per block its feasible count, -1 when invalid, best cached total and that
        total's count), None when ``place`` walks node by node (for tests and diagnosis)."""
        if not self._caching or not self._blk_ready:
            return None
        return np.array(self._blk)

    @property
    def selected_rows(self):
        """(k,) int64 scratch: the rows of the feasible nodes found by the last :meth:`run` (not
        by :meth:`place`, whose walk by blocks does not list the nodes of the blocks it takes)."""
        return np.asarray(self._sel)

    @property
    def totals(self):
        """(k,) int64 scratch: their total scores (valid for the first ``found`` entries)."""
        return np.asarray(self._totals)

    cdef inline void _scorer_rows(self, TableColumns cols, Py_ssize_t q, int kind, const int64_t* pos,
                                  Py_ssize_t n_pos, const int64_t* sel, double* fractions) noexcept nogil:
        """Resource scorer ``q`` on the found nodes at positions ``pos[:n_pos]``. Called with a
        literal ``kind`` per branch of :meth:`_score_range`, so the compiler specializes each loop
        for its scorer."""
        cdef Py_ssize_t f, j0 = self.rs_off[q], j1 = self.rs_off[q + 1], m0 = self.rs_shape_off[q]
        cdef Py_ssize_t m = self.rs_shape_off[q + 1] - m0, out = self.n_static + q
        cdef const int64_t* shape_u = &self.rs_shape_u[m0] if m else NULL
        cdef const int64_t* shape_s = &self.rs_shape_s[m0] if m else NULL
        cdef const int64_t* alloc_cols = &self.rs_alloc_cols[j0]
        cdef const int64_t* used_cols = &self.rs_used_cols[j0]
        cdef const uint8_t* used_nonzero = &self.rs_used_nonzero[j0]
        cdef const int64_t* requests = &self.rs_requests[j0]
        cdef const int64_t* weights = &self.rs_res_weights[j0]
        cdef int64_t r
        cdef Py_ssize_t j
        for j in range(n_pos):
            f = pos[j]
            r = sel[f]
            self._scores[out, f] = resource_score(kind, &cols.alloc[r, 0], &cols.requested[r, 0], &cols.nonzero[r, 0],
                                                  j1 - j0, alloc_cols, used_cols, used_nonzero, requests, weights,
                                                  shape_u, shape_s, m, fractions)

    cdef bint _score_range(self, TableColumns cols, Py_ssize_t f0, Py_ssize_t f1, const int64_t* sel,
                           double* fractions) noexcept nogil:
        """Raw static scores and weighted resource totals of found nodes ``f0:f1``: a total from
        the cache for rows unchanged since it was computed; for the others the resource scores
        computed, range-checked, weighted and summed (and the total cached when all were in
        range). Returns whether a resource score of these nodes left [0, 100]. The columns, the
        score rows and the cache as plain pointers read once: the loops below load no memoryview
        field of self or cols per node (the static gather and the cache's version test are ~60% of
        the scoring's time at 500 found nodes)."""
        cdef Py_ssize_t s, q, f, j, n_pos = 0
        cdef Py_ssize_t n_static = self.n_static, n_rs = self.n_rs
        cdef int kind
        cdef int64_t r, t, v, e
        cdef bint bad = False, row_bad
        cdef int64_t* pos = &self._pos[f0]  # this range's part of the scratch
        cdef int64_t* scores_p = &self._scores[0, 0]
        cdef Py_ssize_t score_stride = self._scores.strides[0] // sizeof(int64_t)
        cdef const int64_t* raw_p
        cdef Py_ssize_t raw_stride
        cdef int64_t* out_p
        cdef int64_t* tot_p = scores_p + (n_static + n_rs) * score_stride  # the weighted resource totals
        cdef const int64_t* rs_weight_p
        cdef int64_t* cache_p = NULL
        cdef bint caching = self._caching
        cdef int64_t* blk_p = &self._blk[0, 0] if caching and self._blk_ready else NULL
        cdef const int32_t* blk_of_p = &self._blk_of_row[0] if caching and self._blk_ready else NULL
        cdef int32_t b
        if n_static:
            raw_p = &self.static_raw[0, 0]
            raw_stride = self.static_raw.strides[0] // sizeof(int64_t)
            for s in range(n_static):
                out_p = scores_p + s * score_stride
                for f in range(f0, f1):
                    out_p[f] = raw_p[sel[f]]
                raw_p += raw_stride
        if n_rs == 0:
            for f in range(f0, f1):
                tot_p[f] = 0
            return False
        if caching and self._hinted:  # the walk wrote each found node's entry's value
            cache_p = &self._cache[0]
            for f in range(f0, f1):
                if tot_p[f] < 0:  # (a verdict: no total cached)
                    pos[n_pos] = f
                    n_pos += 1
        elif caching:
            cache_p = &self._cache[0]  # (C,): the value + 2 per row (see _FITS_UNSCORED)
            for f in range(f0, f1):
                r = sel[f]
                e = cache_p[r]
                if e >= 2:  # (a total: not empty, not a fit verdict)
                    tot_p[f] = e - 2
                else:
                    pos[n_pos] = f
                    n_pos += 1
        else:
            for f in range(f0, f1):
                pos[n_pos] = f
                n_pos += 1
        if n_pos == 0:
            return False
        for q in range(n_rs):
            kind = <int> self.rs_kind[q]
            if kind == KIND_LEAST_ALLOCATED:
                self._scorer_rows(cols, q, KIND_LEAST_ALLOCATED, pos, n_pos, sel, fractions)
            elif kind == KIND_BALANCED:
                self._scorer_rows(cols, q, KIND_BALANCED, pos, n_pos, sel, fractions)
            elif kind == KIND_MOST_ALLOCATED:
                self._scorer_rows(cols, q, KIND_MOST_ALLOCATED, pos, n_pos, sel, fractions)
            else:
                self._scorer_rows(cols, q, kind, pos, n_pos, sel, fractions)
        # the computed nodes' weights with upstream's range check, summed; cached only when in range
        rs_weight_p = &self.rs_weight[0]
        out_p = scores_p + n_static * score_stride
        for j in range(n_pos):
            f = pos[j]
            t = 0
            row_bad = False
            for q in range(n_rs):
                v = out_p[q * score_stride + f]
                if v < 0 or v > MAX_NODE_SCORE:
                    row_bad = True
                t = t + v * rs_weight_p[q]
            tot_p[f] = t
            if row_bad:
                bad = True
            elif caching and 0 <= t <= _MAX_TOTAL:  # (a negative total would read as a fit verdict)
                cache_p[sel[f]] = t + 2
                if blk_of_p != NULL:  # (the row's block was invalid already: see _blk; kept so)
                    b = blk_of_p[sel[f]]
                    if b >= 0:
                        blk_p[3 * b] = -1
        return bad

    def run(self, TableColumns cols, const int64_t[::1] order, Py_ssize_t start, Py_ssize_t k, bint score,
            int n_threads=1, const uint8_t[::1] cycle_ok=None):
        """One cycle: returns ``(found, examined, best, ties, first)``.

        ``order``: (N,) rows in upstream's node order; ``start``: the round-robin start position;
        ``k``: numFeasibleNodesToFind. ``found`` feasible nodes (at most k) are in
        :attr:`selected_rows`; ``examined`` is how far past ``start`` upstream's search went
        (k when it stopped at the (k+1)-th feasible node's position, else N). With ``score`` and
        ``found`` >= 2, the nodes are scored: ``best`` is the highest total, ``ties`` how many nodes
        have it and ``first`` the first of them; ``ties`` is SCORE_OUT_OF_RANGE when a normalized
        score left [0, 100]. Windows of PARALLEL_MIN_NODES or more are scored on ``n_threads``
        threads (the results do not depend on it). ``cycle_ok``: an optional (C,) uint8 mask of this
        cycle's own verdicts (Filters that read the pods on the nodes), AND-ed with the plan's.
        """
        cdef Py_ssize_t n = order.shape[0]
        cdef Py_ssize_t found, examined
        if n == 0 or k <= 0:
            return 0, 0, 0, 0, -1
        self._begin(cols, k)
        found, examined = self._filter(cols, order, start, k, 0, n, 0, cycle_ok, score)  # (examined: N at the end)
        if not score or found < 2:
            return found, examined, 0, 0, -1
        best, ties, first = self._score_found(cols, found, None, None, n_threads)
        return found, examined, best, ties, first

    def place(self, TableColumns cols, object order_array, Py_ssize_t start, Py_ssize_t k,
              int n_threads=1, object capsule=None):
        """:meth:`run` with scores, then selectHost's pick: returns ``(row, found, examined)``.

        ``row`` is the chosen node's table row: the only feasible node, the single best, or among
        ``ties`` > 1 best the ``Generator.integers(ties)``-th drawn from the bit generator behind
        ``capsule`` (``rng.bit_generator.capsule``), in C, the same number and generator state as
        ``compiled_cycle.seeded_tie`` leaves. Otherwise ``row`` is PLACE_NONE_FEASIBLE,
        PLACE_OUT_OF_RANGE, or PLACE_DRAW_TIES (no ``capsule``, or more ties than ``_tie.max_ties()``:
        nothing drawn; the caller draws from :attr:`totals` as after :meth:`run`, whose ``best`` is
        then ``totals``' maximum over the ``found`` entries). One call instead of :meth:`run`, the
        tie draw and the :attr:`selected_rows` read: the compiled cycle's common case."""
        cdef const int64_t[::1] order = cols.order_view(order_array)
        cdef Py_ssize_t n = order.shape[0]
        cdef Py_ssize_t found, examined, ties, first, pick
        cdef int64_t best, row
        cdef bitgen_t* bg
        if n == 0 or k <= 0:
            return PLACE_NONE_FEASIBLE, 0, 0
        self._begin(cols, k)
        # the common case at scale: whole blocks of the order summarized (see BLOCK_NODES); the
        # per-node walk below when the plan's totals are not all cached per row (static score
        # columns, no fit check or cache) or for ties the kernel cannot draw
        if self._caching and self.check_fit and self.n_static == 0 and self._blocks_for(order_array, order):
            if self._place_blocks(cols, order, start, k, capsule, &row, &found, &examined):
                return row, found, examined
        found, examined = self._filter(cols, order, start, k, 0, n, 0, None, True)
        if found == 0:
            return PLACE_NONE_FEASIBLE, found, examined
        if found == 1:
            return self._sel[0], found, examined
        best, ties, first = self._score_found(cols, found, None, None, n_threads)
        if ties == SCORE_OUT_OF_RANGE:
            return PLACE_OUT_OF_RANGE, found, examined
        if ties == 1:
            return self._sel[first], found, examined
        if capsule is None or <uint64_t>ties > _tie.max_ties():
            return PLACE_DRAW_TIES, found, examined
        bg = <bitgen_t*>_tie.PyCapsule_GetPointer(capsule, "BitGenerator")
        # (with the GIL held: a draw; the ties' positions were kept by the scoring, in order)
        pick = self._best_pos[<Py_ssize_t>_tie.bounded_below(bg, ties)]
        return self._sel[pick], found, examined

    cdef bint _blocks_for(self, object order_array, const int64_t[::1] order) except -1:
        """Whether :meth:`place` may walk ``order`` by blocks; their summaries (all invalid) and
        the rows' blocks are set up when the order is not the last one's. Not for an order that
        can be written in place (its summaries could not tell: a placement's rows), which leaves
        the last order's blocks as they are (kept valid through the log meanwhile: the snapshot's
        order walked again after a placement's costs no new set-up), nor one with a row twice or
        out of the cache's range (the changed-rows log invalidates one block per row)."""
        cdef Py_ssize_t p, n = order.shape[0], nb = (order.shape[0] + _BLOCK - 1) >> _BLOCK_SHIFT
        cdef int64_t r
        cdef int32_t* of_p
        if order_array is self._blk_order:
            return self._blk_ready
        flags = getattr(order_array, "flags", None)
        if flags is None or flags.writeable:
            return False
        self._blk_order = order_array
        self._blk_ready = False
        if nb > self._blk.shape[0]:
            return False
        self._blk_of_row[:] = -1
        of_p = &self._blk_of_row[0]
        for p in range(n):
            r = order[p]
            if r < 0 or r >= self._blk_of_row.shape[0] or of_p[r] >= 0:
                return False
            of_p[r] = <int32_t>(p >> _BLOCK_SHIFT)
        self._blk[:, 0] = -1
        self._blk_ready = True
        return True

    cdef int _place_blocks(self, TableColumns cols, const int64_t[::1] order, Py_ssize_t start, Py_ssize_t k,
                           object capsule, int64_t* row_out, Py_ssize_t* found_out,
                           Py_ssize_t* examined_out) except -1:
        """:meth:`place`'s walk, scoring and pick with whole blocks (see BLOCK_NODES) taken from
        their summaries: a block of the order that lies in the walk's window, with a valid summary
        and not holding the (k+1)-th feasible node, adds its count, best total and the best's count
        instead of being visited; the other positions are visited one by one as ``_walk`` visits
        them (the same cache writes) and scored as the found nodes are scored. The totals compared
        are the cached resource totals (the plan's constant ``offset`` added to every one changes
        no order; the plan has no static score column). The drawn tie is the same index among the
        ties in walk order, found again by block counts. Returns 1 when answered, and 0, having
        drawn nothing, for ties it cannot draw (no bit generator, more than ``_tie.max_ties()``):
        the caller walks node by node and hands them back. Afterwards the invalid blocks whose
        start the walk reached are summarized again from their entries (left invalid when one is
        not final)."""
        cdef Py_ssize_t n = order.shape[0]
        cdef const int64_t* order_p = &order[0]
        cdef const uint8_t* static_ok_p = &self.static_ok[0] if self.has_static_ok else NULL
        cdef int64_t* cache_p = &self._cache[0]
        cdef const int64_t* pod_count_p = &cols.pod_count[0]
        cdef const int64_t* allowed_p = &cols.allowed_pods[0]
        cdef const int64_t* alloc_p = &cols.alloc[0, 0]
        cdef const int64_t* requested_p = &cols.requested[0, 0]
        cdef Py_ssize_t alloc_stride = cols.alloc.strides[0] // sizeof(int64_t)
        cdef Py_ssize_t requested_stride = cols.requested.strides[0] // sizeof(int64_t)
        cdef Py_ssize_t n_fit = self.fit_cols.shape[0]
        cdef const int64_t* fit_cols_p = &self.fit_cols[0] if n_fit else NULL
        cdef const int64_t* fit_wants_p = &self.fit_wants[0] if n_fit else NULL
        cdef int64_t* blk_p = &self._blk[0, 0]        # (NB, 3): count (-1 invalid), best, its count
        cdef int64_t* seq_p = &self._blk_seq[0, 0]    # (NB + 1, 2): block taken, nodes visited before it
        cdef int64_t* todo_p = &self._blk_todo[0]
        cdef int64_t* sel = &self._sel[0]
        cdef int64_t* tot_p = &self._scores[self.n_rs, 0]  # the found nodes' hints, then totals (no static rows)
        cdef Py_ssize_t i = 0, p, b, m = 0, found = 0, examined = n, n_seq = 0, n_todo = 0, j, f
        cdef Py_ssize_t last_block = n - _BLOCK
        cdef int64_t r, h, c, best = INT64_MIN, ties = 0, t
        cdef uint64_t idx = 0
        cdef bint bad
        cdef bitgen_t* bg
        while i < n:
            p = start + i
            if p >= n:
                p -= n
            if (p & (_BLOCK - 1)) == 0 and p <= last_block and i <= last_block:  # a whole block in the window
                b = p >> _BLOCK_SHIFT
                c = blk_p[3 * b]
                if c < 0:
                    todo_p[n_todo] = b  # (visited below; each block's start is reached once a walk)
                    n_todo += 1
                elif found + c <= k:
                    seq_p[2 * n_seq] = b
                    seq_p[2 * n_seq + 1] = m
                    n_seq += 1
                    found += c
                    if c:
                        t = blk_p[3 * b + 1]
                        if t > best:
                            best, ties = t, blk_p[3 * b + 2]
                        elif t == best:
                            ties += blk_p[3 * b + 2]
                    i += _BLOCK
                    continue
            i += 1
            r = order_p[p]
            if static_ok_p != NULL and not static_ok_p[r]:
                continue
            # (an empty entry written here: its block is invalid already, see _blk)
            h = _cached_fit(r, cache_p, pod_count_p, allowed_p, alloc_p, alloc_stride, requested_p,
                            requested_stride, fit_cols_p, fit_wants_p, n_fit)
            if h == _NO_FIT:
                continue
            if found == k:
                examined = i - 1
                break
            sel[m] = r
            tot_p[m] = h
            m += 1
            found += 1
        found_out[0], examined_out[0] = found, examined
        if found == 0:
            row_out[0] = PLACE_NONE_FEASIBLE
        elif found == 1:  # (the only feasible node: not scored, as _filter's caller does)
            row_out[0] = self._nth_found(order_p, static_ok_p, cache_p, blk_p, seq_p, n_seq, sel, tot_p, m,
                                         True, 0, 0)
        else:
            self._hinted = True  # (tot_p[:m] holds the walk's hints, as _filter leaves them)
            bad = self._score_range(cols, 0, m, sel, self._fractions) if m else False
            if bad:
                row_out[0] = PLACE_OUT_OF_RANGE
            else:
                for f in range(m):
                    t = tot_p[f]
                    if t > best:
                        best, ties = t, 1
                    elif t == best:
                        ties += 1
                if ties > 1:
                    if capsule is None or <uint64_t>ties > _tie.max_ties():
                        return 0
                    bg = <bitgen_t*>_tie.PyCapsule_GetPointer(capsule, "BitGenerator")
                    idx = _tie.bounded_below(bg, ties)
                row_out[0] = self._nth_found(order_p, static_ok_p, cache_p, blk_p, seq_p, n_seq, sel, tot_p, m,
                                             False, best, idx)
        for j in range(n_todo):
            self._summarize(order_p, static_ok_p, cache_p, blk_p, todo_p[j])
        return 1

    cdef inline int64_t _nth_found(self, const int64_t* order_p, const uint8_t* static_ok_p, const int64_t* cache_p,
                                   const int64_t* blk_p, const int64_t* seq_p, Py_ssize_t n_seq, const int64_t* sel,
                                   const int64_t* tot_p, Py_ssize_t m, bint any_found, int64_t best,
                                   uint64_t idx) noexcept nogil:
        """The row of the ``idx``-th found node in walk order with the total ``best`` (any found
        node with ``any_found``) after :meth:`_place_blocks`' walk: the nodes visited one by one
        are ``sel[:m]`` (totals ``tot_p``), the blocks taken whole ``seq_p`` in between."""
        cdef Py_ssize_t j, f, p, prev = 0, end
        cdef int64_t b, c, r, h
        for j in range(n_seq + 1):
            end = seq_p[2 * j + 1] if j < n_seq else m
            for f in range(prev, end):
                if any_found or tot_p[f] == best:
                    if idx == 0:
                        return sel[f]
                    idx -= 1
            prev = end
            if j == n_seq:
                break
            b = seq_p[2 * j]
            if any_found:
                c = blk_p[3 * b]
            else:
                c = blk_p[3 * b + 2] if blk_p[3 * b] > 0 and blk_p[3 * b + 1] == best else 0
            if idx < <uint64_t>c:
                for p in range(b << _BLOCK_SHIFT, (b + 1) << _BLOCK_SHIFT):
                    r = order_p[p]
                    if static_ok_p != NULL and not static_ok_p[r]:
                        continue
                    h = cache_p[r] - 2
                    if h >= 0 and (any_found or h == best):
                        if idx == 0:
                            return r
                        idx -= 1
            idx -= c
        return -1  # (PLACE_NONE_FEASIBLE; not reached: idx is below the found nodes' count)

    cdef inline void _summarize(self, const int64_t* order_p, const uint8_t* static_ok_p, const int64_t* cache_p,
                                int64_t* blk_p, int64_t b) noexcept nogil:
        """Block ``b``'s summary from its rows' cache entries, left invalid when an entry of a row
        passing ``static_ok`` is not final (empty, or a fit without a cached total)."""
        cdef Py_ssize_t p
        cdef int64_t r, e, c = 0, best = INT64_MIN, ties = 0
        for p in range(b << _BLOCK_SHIFT, (b + 1) << _BLOCK_SHIFT):
            r = order_p[p]
            if static_ok_p != NULL and not static_ok_p[r]:
                continue
            e = cache_p[r] - 2
            if e == _NO_FIT:
                continue
            if e < 0:
                return
            c += 1
            if e > best:
                best, ties = e, 1
            elif e == best:
                ties += 1
        blk_p[3 * b + 1] = best
        blk_p[3 * b + 2] = ties
        blk_p[3 * b] = c

    def place_run(self, TableColumns cols, const int64_t[::1] order, Py_ssize_t start, Py_ssize_t k,
                  Py_ssize_t m, object acc, const int64_t[::1] recs, list uids, int shape, int flags,
                  int signature, int affinity_signature, int64_t version, int n_threads, object capsule,
                  int64_t[::1] rows, int64_t[::1] examined, int64_t[::1] found, uint8_t[::1] canonical):
        """:meth:`place` for up to ``m`` pods of this plan's spec one after another (a gang's run
        of identical members, docs/dev/gang-runs.md section 4): returns how many it placed.

        Pod ``i`` is placed from ``start`` as :meth:`place` places it; its row goes to
        ``rows[i]``, its counts to ``found[i]`` / ``examined[i]``; then, before pod ``i + 1`` is
        filtered, it is accounted on that row through the node table's own writer
        (``acc.add_pod``: ``_table.Accounts``, the one that ``NodeTable.add_pod`` and the compiled
        binding path call; record ``recs[i]``, uid ``uids[i]``, the spec's ``shape`` / ``flags`` /
        signatures, version ``version + 1 + i``; ``canonical[i]`` its answer), and the start moves
        by ``examined[i]``. The run stops at the first pod :meth:`place` would not pick a row for
        (no feasible node, a score out of range, ties it cannot draw): nothing is written or drawn
        for that pod, whose caller takes it up as a single pod. Ties are drawn from ``capsule`` in
        pod order, so the generator's state is the single pods' after them."""
        cdef Py_ssize_t n = order.shape[0]
        cdef Py_ssize_t i, nf, ex, ties, first, pick
        cdef int64_t best, row
        cdef bitgen_t* bg = NULL
        if m > rows.shape[0] or m > examined.shape[0] or m > found.shape[0] or m > canonical.shape[0] \
                or m > recs.shape[0] or m > len(uids):
            raise ValueError("place_run: the output and record arrays need m entries")
        if n == 0 or k <= 0:
            return 0
        if capsule is not None:
            bg = <bitgen_t*>_tie.PyCapsule_GetPointer(capsule, "BitGenerator")
        for i in range(m):
            self._begin(cols, k)
            nf, ex = self._filter(cols, order, start, k, 0, n, 0, None, True)
            if nf == 0:
                return i
            if nf == 1:
                row = self._sel[0]
            else:
                best, ties, first = self._score_found(cols, nf, None, None, n_threads)
                if ties == SCORE_OUT_OF_RANGE:
                    return i
                if ties == 1:
                    row = self._sel[first]
                else:
                    if bg == NULL or <uint64_t>ties > _tie.max_ties():
                        return i
                    pick = self._best_pos[<Py_ssize_t>_tie.bounded_below(bg, ties)]
                    row = self._sel[pick]
            rows[i] = row
            found[i] = nf
            examined[i] = ex
            canonical[i] = 1 if acc.add_pod(row, recs[i], uids[i], shape, flags, signature, affinity_signature,
                                            version + 1 + i) else 0
            start += ex
            start %= n
        return m

    cdef int _begin(self, TableColumns cols, Py_ssize_t k) except -1:
        """A cycle's start: scratch for k found nodes; a score cache as large as the table, synced
        with its changed-rows log."""
        self._ensure(k)
        if self._caching:
            if self._cache.shape[0] < cols.pod_count.shape[0]:
                self.enable_score_cache(cols.pod_count.shape[0])  # the table grew: start afresh
            self._sync(cols)
        return 0

    cdef void _sync(self, TableColumns cols) noexcept:
        """Empty the cache entries of the rows the table logged as changed since this plan last
        read its log; all of them when the log is another (another table, a fork's, a restored
        one) or the plan fell more than the log's size behind (its oldest entries overwritten)."""
        cdef int64_t end = cols.change_pos[0]
        cdef int64_t q, read = self._log_read
        cdef int64_t mask = cols.change_rows.shape[0] - 1
        cdef int64_t* cache_p = &self._cache[0]
        cdef const int64_t* rows_p = &cols.change_rows[0]
        cdef Py_ssize_t r
        if end == read and cols.change_log is self._log:
            return
        cdef int64_t* blk_p = &self._blk[0, 0] if self._blk_ready else NULL
        cdef const int32_t* blk_of_p = &self._blk_of_row[0] if self._blk_ready else NULL
        cdef int64_t row
        cdef int32_t b
        if cols.change_log is not self._log or end - read > mask + 1 or end < read:
            for r in range(self._cache.shape[0]):
                cache_p[r] = -1
            if blk_p != NULL:
                for r in range(self._blk.shape[0]):
                    blk_p[3 * r] = -1
            self._log = cols.change_log
        elif blk_p != NULL:
            for q in range(read, end):
                row = rows_p[q & mask]
                cache_p[row] = -1
                b = blk_of_p[row]
                if b >= 0:
                    blk_p[3 * b] = -1
        else:
            for q in range(read, end):
                cache_p[rows_p[q & mask]] = -1
        self._log_read = end

    def filter_window(self, TableColumns cols, const int64_t[::1] order, Py_ssize_t start, Py_ssize_t k,
                      Py_ssize_t i0, Py_ssize_t i1, Py_ssize_t found, const uint8_t[::1] cycle_ok=None):
        """Step 1 of :meth:`run` over the positions ``i0:i1`` past ``start`` only, ``found`` feasible
        nodes already in :attr:`selected_rows` (0 at ``i0 == 0``): for a ``cycle_ok`` computed a window
        at a time. Returns ``(found, examined)``; ``examined`` is -1 when the window ended before the
        (k+1)-th feasible node (continue from ``i1``; past the last position, N nodes were examined)."""
        cdef Py_ssize_t n = order.shape[0]
        if k <= 0 or i0 < 0 or i1 > n or i0 > i1 or found < 0 or found > k:
            raise ValueError("filter_window: positions or counts out of range")
        if i0 == 0:
            self._begin(cols, k)
        elif self._capacity < k:
            raise ValueError("filter_window: start the cycle at position 0")
        return self._filter(cols, order, start, k, i0, i1, found, cycle_ok)

    cdef tuple _filter(self, TableColumns cols, const int64_t[::1] order, Py_ssize_t start, Py_ssize_t k,
                       Py_ssize_t i0, Py_ssize_t i1, Py_ssize_t found, const uint8_t[::1] cycle_ok, bint hint=False):
        cdef Py_ssize_t n = order.shape[0]
        cdef Py_ssize_t examined = -1
        cdef Py_ssize_t n_fit = self.fit_cols.shape[0] if self.check_fit else 0
        cdef bint has_cycle_ok = cycle_ok is not None
        cdef const int64_t* fit_cols_p = &self.fit_cols[0] if n_fit else NULL
        cdef const int64_t* fit_wants_p = &self.fit_wants[0] if n_fit else NULL
        cdef int64_t* sel = &self._sel[0]
        # the columns as plain pointers, read once: the loop below then loads no memoryview field
        # of self or cols per node (rows of alloc and requested by their row strides)
        cdef bint has_static_ok = self.has_static_ok, check_fit = self.check_fit
        cdef const uint8_t* static_ok_p = NULL
        cdef const uint8_t* cycle_ok_p = NULL
        cdef const int64_t* order_p = NULL
        cdef const int64_t* pod_count_p = NULL
        cdef const int64_t* allowed_p = NULL
        cdef const int64_t* alloc_p = NULL
        cdef const int64_t* requested_p = NULL
        cdef Py_ssize_t alloc_stride = 0, requested_stride = 0
        cdef int64_t* cache_p = NULL
        cdef int64_t* hint_p = NULL
        self._hinted = False
        if has_cycle_ok and cycle_ok.shape[0] < cols.pod_count.shape[0]:
            raise ValueError("cycle_ok needs one entry per table row")
        if i0 >= i1 or n == 0:
            if examined < 0 and i1 == n:
                examined = n
            return found, examined
        order_p = &order[0]
        if has_static_ok:
            static_ok_p = &self.static_ok[0]
        if has_cycle_ok:
            cycle_ok_p = &cycle_ok[0]
        if check_fit:
            pod_count_p = &cols.pod_count[0]
            allowed_p = &cols.allowed_pods[0]
            alloc_p = &cols.alloc[0, 0]
            requested_p = &cols.requested[0, 0]
            alloc_stride = cols.alloc.strides[0] // sizeof(int64_t)
            requested_stride = cols.requested.strides[0] // sizeof(int64_t)
            if self._caching and self._cache.shape[0] >= cols.pod_count.shape[0]:  # (_begin sizes and syncs it)
                cache_p = &self._cache[0]
                if hint and i0 == 0 and found == 0:
                    hint_p = &self._scores[self.n_static + self.n_rs, 0]  # (the rs totals row)
                    self._hinted = True
        # (the walk stops at the (k+1)-th feasible node: about k nodes unless most are infeasible)
        if k >= NOGIL_MIN_NODES or i1 - i0 >= 16 * NOGIL_MIN_NODES:
            with nogil:
                found = _walk(order_p, n, start, k, i0, i1, found, &examined, sel, static_ok_p, cycle_ok_p,
                              pod_count_p, allowed_p, alloc_p, alloc_stride, requested_p, requested_stride,
                              fit_cols_p, fit_wants_p, n_fit, cache_p, hint_p)
        else:
            found = _walk(order_p, n, start, k, i0, i1, found, &examined, sel, static_ok_p, cycle_ok_p,
                          pod_count_p, allowed_p, alloc_p, alloc_stride, requested_p, requested_stride,
                          fit_cols_p, fit_wants_p, n_fit, cache_p, hint_p)
        if examined < 0 and i1 == n:
            examined = n
        return found, examined

    def score_found(self, TableColumns cols, Py_ssize_t found, const int64_t[:, ::1] extra,
                    const int64_t[::1] extra_weight, int n_threads=1):
        """Score the ``found`` nodes the last ``run(..., score=False)`` left in :attr:`selected_rows`,
        adding ``extra``: (E, found) scores already normalized by their plugins (Score plugins that
        read the pods on the nodes, run on the found nodes), weighted by ``extra_weight`` (E,) and
        range-checked as the plan's own. Returns ``(best, ties, first)`` as :meth:`run` does."""
        if found < 1 or found > self._capacity:
            raise ValueError("found must be the count of the last run")
        if extra.shape[0] != extra_weight.shape[0] or (extra.shape[0] and extra.shape[1] < found):
            raise ValueError("extra needs (E, found) scores and E weights")
        self._begin(cols, found)  # (rows changed since the walk: their cached totals dropped)
        return self._score_found(cols, found, extra, extra_weight, n_threads)

    cdef bint _score_pass(self, TableColumns cols, Py_ssize_t found, int64_t* sel, double* fractions, int threads,
                          bint bad, const int64_t[:, ::1] extra, const int64_t[::1] extra_weight, Py_ssize_t n_extra,
                          int64_t* best_out, Py_ssize_t* ties_out, Py_ssize_t* first_out) noexcept nogil:
        """:meth:`_score_found`'s pass after the threaded scoring (with the GIL held or not: see
        NOGIL_MIN_NODES; ``bad``: whether the threaded scoring found a resource score out of range):
        the single-threaded scoring, the normalization, the weighted totals and selectHost's
        maximum; returns whether a score left [0, 100]."""
        cdef Py_ssize_t s, f, e
        cdef Py_ssize_t n_static = self.n_static, n_rs = self.n_rs
        cdef const int64_t* scores_p = &self._scores[0, 0]
        cdef Py_ssize_t score_stride = self._scores.strides[0] // sizeof(int64_t)
        cdef const int64_t* static_weight_p = &self.static_weight[0] if n_static else NULL
        cdef const int64_t* rs_total_p = scores_p + (n_static + n_rs) * score_stride
        cdef int64_t* totals_p = &self._totals[0]
        cdef int64_t* best_pos_p = &self._best_pos[0]
        cdef int64_t offset = self.offset
        cdef int64_t best = 0, t, v
        cdef Py_ssize_t ties = 0, first = -1
        if threads == 1:
            bad = self._score_range(cols, 0, found, sel, fractions)
        for s in range(self.n_static):
            if self.static_mode[s] == NORMALIZE_DEFAULT:
                default_normalize(&self._scores[s, 0], found, MAX_NODE_SCORE, False)
            elif self.static_mode[s] == NORMALIZE_DEFAULT_REVERSE:
                default_normalize(&self._scores[s, 0], found, MAX_NODE_SCORE, True)
        # 3. Weights with the range check, totals and selectHost's maximum in one pass, then the
        # positions of the maximum's ties in order (the first is selectHost's ``first``): two
        # branch-free passes over the totals, where one pass testing each total against the running
        # best mispredicts on the many near-equal totals of a large window (the score rows and
        # weights as plain pointers: no memoryview field loaded per node; the resource scorers'
        # part is each node's weighted total, checked when it was computed)
        if found > 0:
            best = INT64_MIN
        if n_static == 0 and n_extra == 0:
            for f in range(found):  # (the common case)
                t = offset + rs_total_p[f]
                totals_p[f] = t
                best = t if t > best else best
        else:
            for f in range(found):
                t = offset + rs_total_p[f]
                for s in range(n_static):
                    v = scores_p[s * score_stride + f]
                    if v < 0 or v > MAX_NODE_SCORE:
                        bad = True
                    t = t + v * static_weight_p[s]
                for e in range(n_extra):
                    v = extra[e, f]
                    if v < 0 or v > MAX_NODE_SCORE:
                        bad = True
                    t = t + v * extra_weight[e]
                totals_p[f] = t
                best = t if t > best else best
        if found > 0:
            for f in range(found):
                best_pos_p[ties] = f  # (overwritten unless this total is the best: ties <= f)
                ties += totals_p[f] == best
            first = best_pos_p[0]
        best_out[0], ties_out[0], first_out[0] = best, ties, first
        return bad

    cdef tuple _score_found(self, TableColumns cols, Py_ssize_t found, const int64_t[:, ::1] extra,
                            const int64_t[::1] extra_weight, int n_threads):
        cdef Py_ssize_t c, chunk
        cdef Py_ssize_t n_extra = extra.shape[0] if extra is not None else 0
        cdef int threads
        cdef int64_t best = 0
        cdef Py_ssize_t ties = 0, first = -1
        cdef bint bad = False
        cdef double* fractions
        cdef uint8_t* chunk_bad = NULL
        cdef int64_t* sel = &self._sel[0]
        threads = n_threads if found >= PARALLEL_MIN_NODES and n_threads > 1 else 1
        if threads > 1:
            fractions = <double*> malloc(self.max_res * threads * sizeof(double))
            chunk_bad = <uint8_t*> malloc(threads * sizeof(uint8_t))
            if fractions == NULL or chunk_bad == NULL:
                free(fractions)
                free(chunk_bad)
                raise MemoryError()
        else:
            fractions = self._fractions  # (no allocation per cycle)
        try:
            # 2. Score the found nodes: static columns gathered, resource scorers computed (on
            # several threads for a large window: each node's scores are independent), then the
            # static columns normalized over the found nodes.
            if threads > 1:
                chunk = (found + threads - 1) // threads
                with nogil:
                    for c in prange(threads, num_threads=threads, schedule="static"):
                        chunk_bad[c] = self._score_range(cols, c * chunk, min(found, (c + 1) * chunk), sel,
                                                         fractions + self.max_res * c)
                for c in range(threads):
                    if chunk_bad[c]:
                        bad = True
            if found >= NOGIL_MIN_NODES:
                with nogil:
                    bad = self._score_pass(cols, found, sel, fractions, threads, bad, extra, extra_weight, n_extra,
                                           &best, &ties, &first)
            else:
                bad = self._score_pass(cols, found, sel, fractions, threads, bad, extra, extra_weight, n_extra,
                                       &best, &ties, &first)
        finally:
            if threads > 1:
                free(fractions)
                free(chunk_bad)
        if bad:
            return 0, SCORE_OUT_OF_RANGE, -1
        return best, ties, first


def same_objects(tuple a, tuple b):
    """Whether tuples ``a`` and ``b`` hold the very same objects in the same order (identity, not
    equality: no ``__eq__`` runs). The compiled cycle's test that a pod has the last cycle's spec
    objects (``CompiledCycle.schedule``), ~20 ns where a Python loop over the 16 fields takes ~0.5 µs."""
    cdef Py_ssize_t i, n = len(a)
    if len(b) != n:
        return False
    for i in range(n):
        if a[i] is not b[i]:
            return False
    return True
