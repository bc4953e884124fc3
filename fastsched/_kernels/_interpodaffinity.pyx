# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""InterPodAffinity's vectorized Filter for a window of rows, in compiled passes.

Filter's three checks (upstream ``satisfyPodAffinity``, ``satisfyPodAntiAffinity``,
``satisfyExistingPodsAntiAffinity``) read, for each row, per-domain counts at the row's label code of
a topology key. :func:`mark` ORs one term's (or one key's) outcome into a per-row bit set, one call
per term; :func:`verdicts` turns the bits into status codes and reason ids in upstream's order
(affinity, then anti-affinity, then existing pods' anti-affinity). What a NumPy expression would do
with a gathered array, a padded copy of the counts and a boolean mask per check, per window.

Shapes: ``C`` table rows, ``n`` window rows, ``V`` label values of a key. counts: (V,) int64 by label
code; codes: (C,) int32, a label column of the table (-1: label absent); rows: (n,) int64; bits:
(n,) uint8.
"""
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from libc.stdlib cimport free, malloc
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t
cimport numpy as cnp
from fastsched._kernels._arrays cimport vector

import numpy as np

cnp.import_array()


cdef inline cnp.ndarray _vector(object a, int type_num, bint writable, str what):
    """``a`` as a 1-d C-contiguous native-order array of ``type_num`` (writable when asked), else
    ValueError (TypeError for a non-array): what a ``T[::1]`` memoryview argument accepts of a NumPy
    array, checked without acquiring a buffer (``_arrays.vector``). The per-cycle kernels below take
    PreScore's and Score's small arrays (one domain per topology value: often a handful of entries),
    where making a memoryview cost more than the loop."""
    return vector(a, type_num, writable, True, what)

#: ``bits`` flags
cdef enum:
    _MISSING_KEY = 1      # the node lacks an affinity term's topology key
    _NO_MATCHING_POD = 2  # an affinity term's domain has no matching pod
    _ANTI = 4             # an incoming anti-affinity term's domain has a matching pod
    _EXISTING = 8         # an existing pod's anti-affinity term matches in the node's domain
MISSING_KEY = _MISSING_KEY
NO_MATCHING_POD = _NO_MATCHING_POD
ANTI = _ANTI
EXISTING = _EXISTING


def mark(const int64_t[::1] counts, const int32_t[::1] codes, const int64_t[::1] rows, uint8_t[::1] bits,
         uint8_t hit_bit, uint8_t miss_bit, uint8_t absent_bit):
    """For each i < len(rows) with ``d = codes[rows[i]]``: ``bits[i] |= absent_bit`` when d < 0,
    else ``hit_bit`` when ``counts[d] > 0`` (d past ``counts`` reads 0), else ``miss_bit``."""
    cdef Py_ssize_t n = rows.shape[0], v = counts.shape[0], i
    cdef int32_t code
    if bits.shape[0] < n:
        raise ValueError(f"mark: bits has {bits.shape[0]} entries for {n} rows")
    with nogil:
        for i in range(n):
            code = codes[rows[i]]
            if code < 0:
                bits[i] |= absent_bit
            elif code < v and counts[code] > 0:
                bits[i] |= hit_bit
            else:
                bits[i] |= miss_bit


def verdicts(const uint8_t[::1] bits, bint first_pod, int8_t unresolvable, int8_t unschedulable):
    """``(codes (n,) int8, reason ids (n,) int32)`` from the bits of :func:`mark`: reason 0 with
    ``unresolvable`` when an affinity term's key is missing or (unless ``first_pod``: upstream's
    first pod of a group) a domain has no matching pod; else reason 1 with ``unschedulable`` for
    ANTI; else reason 2 with ``unschedulable`` for EXISTING; else (0, -1)."""
    cdef Py_ssize_t n = bits.shape[0], i
    cdef uint8_t b, affinity_mask = _MISSING_KEY if first_pod else (_MISSING_KEY | _NO_MATCHING_POD)
    codes_arr = np.zeros(n, dtype=np.int8)
    reasons_arr = np.full(n, -1, dtype=np.int32)
    cdef int8_t[::1] codes = codes_arr
    cdef int32_t[::1] reasons = reasons_arr
    with nogil:
        for i in range(n):
            b = bits[i]
            if b == 0:
                continue
            if b & affinity_mask:
                codes[i] = unresolvable
                reasons[i] = 0
            elif b & _ANTI:
                codes[i] = unschedulable
                reasons[i] = 1
            elif b & _EXISTING:
                codes[i] = unschedulable
                reasons[i] = 2
    return codes_arr, reasons_arr


def hit_verdicts(const int64_t[::1] counts, const int32_t[::1] codes, const int64_t[::1] rows,
                 int8_t code_on_hit, int32_t reason_on_hit):
    """``(codes (n,) int8, reason ids (n,) int32)`` for one count array alone: ``(code_on_hit,
    reason_on_hit)`` at each i < len(rows) whose ``d = codes[rows[i]]`` has ``0 <= d <
    len(counts)`` and ``counts[d] > 0``, else ``(0, -1)``. What :func:`mark` with one hit bit and
    :func:`verdicts` give when that bit is the only one any check can set (Filter's existing pods'
    anti-affinity on one topology key, the pod without required terms), in one pass without the
    bit set."""
    cdef Py_ssize_t n = rows.shape[0], v = counts.shape[0], i
    cdef int32_t code
    # (np.empty and every entry written below: np.full is a Python-level call, ~1 us a window)
    codes_arr = np.empty(n, dtype=np.int8)
    reasons_arr = np.empty(n, dtype=np.int32)
    cdef int8_t[::1] out_codes = codes_arr
    cdef int32_t[::1] reasons = reasons_arr
    with nogil:
        for i in range(n):
            code = codes[rows[i]]
            if 0 <= code < v and counts[code] > 0:
                out_codes[i] = code_on_hit
                reasons[i] = reason_on_hit
            else:
                out_codes[i] = 0
                reasons[i] = -1
    return codes_arr, reasons_arr


cdef inline void _hits(const int64_t[::1] counts, const int32_t[::1] codes, const int64_t[::1] rows,
                       int8_t[::1] out_codes, int32_t[::1] reasons, int8_t code_on_hit,
                       int32_t reason_on_hit) noexcept nogil:
    """The rows still passing (reason -1) whose domain has a positive count take
    ``(code_on_hit, reason_on_hit)``: a later check never overrides an earlier one's verdict."""
    cdef Py_ssize_t n = rows.shape[0], v = counts.shape[0], i
    cdef int32_t code
    for i in range(n):
        if reasons[i] < 0:
            code = codes[rows[i]]
            if 0 <= code < v and counts[code] > 0:
                out_codes[i] = code_on_hit
                reasons[i] = reason_on_hit


def anti_verdicts(list anti, list existing, const int64_t[::1] rows, int8_t unschedulable):
    """``(codes (n,) int8, reason ids (n,) int32)`` for Filter without required affinity terms:
    ``anti`` and ``existing`` are lists of ``(counts (V,) int64, codes (C,) int32)``, one per
    incoming anti-affinity term (reason 1) and one per topology key of existing pods'
    anti-affinity (reason 2), checked in that order: a row takes ``(unschedulable, 1)`` when any
    ``anti`` entry has a positive count at its label code, else ``(unschedulable, 2)`` for an
    ``existing`` entry, else ``(0, -1)``. What :func:`mark` per entry and :func:`verdicts` with no
    affinity bit give, without the bit set and its second pass."""
    cdef Py_ssize_t n = rows.shape[0], i
    codes_arr = np.empty(n, dtype=np.int8)
    reasons_arr = np.empty(n, dtype=np.int32)
    cdef int8_t[::1] out_codes = codes_arr
    cdef int32_t[::1] reasons = reasons_arr
    cdef const int64_t[::1] counts
    cdef const int32_t[::1] column
    with nogil:
        for i in range(n):
            out_codes[i] = 0
            reasons[i] = -1
    for counts, column in anti:
        with nogil:
            _hits(counts, column, rows, out_codes, reasons, unschedulable, 1)
    for counts, column in existing:
        with nogil:
            _hits(counts, column, rows, out_codes, reasons, unschedulable, 2)
    return codes_arr, reasons_arr


def add_scores_at(scores, codes, rows, out):
    """For each i < len(rows) with ``d = codes[rows[i]]``: ``out[i] += scores[d]`` when
    ``0 <= d < len(scores)`` (a node without the key, or with a value no term reached, adds 0).
    Score's sum over topology keys, one call per key. scores: (V,) int64; codes: (C,) int32;
    rows: (n,) int64; out: (>= n,) int64, writable (all 1-d C-contiguous)."""
    cdef cnp.ndarray s_arr = _vector(scores, cnp.NPY_INT64, False, "add_scores_at scores")
    cdef cnp.ndarray c_arr = _vector(codes, cnp.NPY_INT32, False, "add_scores_at codes")
    cdef cnp.ndarray r_arr = _vector(rows, cnp.NPY_INT64, False, "add_scores_at rows")
    cdef cnp.ndarray o_arr = _vector(out, cnp.NPY_INT64, True, "add_scores_at out")
    cdef Py_ssize_t n = cnp.PyArray_DIM(r_arr, 0), v = cnp.PyArray_DIM(s_arr, 0), i
    cdef Py_ssize_t width = cnp.PyArray_DIM(c_arr, 0)
    cdef const int64_t* s_ = <const int64_t*>cnp.PyArray_DATA(s_arr)
    cdef const int32_t* c_ = <const int32_t*>cnp.PyArray_DATA(c_arr)
    cdef const int64_t* r_ = <const int64_t*>cnp.PyArray_DATA(r_arr)
    cdef int64_t* o_ = <int64_t*>cnp.PyArray_DATA(o_arr)
    cdef int32_t code
    cdef int64_t row
    if cnp.PyArray_DIM(o_arr, 0) < n:
        raise ValueError(f"add_scores_at: out has {cnp.PyArray_DIM(o_arr, 0)} entries for {n} rows")
    for i in range(n):  # (the rows are the table's: checked once, as the memoryview's bounds were not)
        row = r_[i]
        if row < 0 or row >= width:
            raise IndexError(f"add_scores_at: row {row} outside a label column of {width} rows")
    with nogil:
        for i in range(n):
            code = c_[r_[i]]
            if 0 <= code < v:
                o_[i] += s_[code]


def normalize(scores):
    """Upstream ``NormalizeScore`` in place: with ``lo``/``hi`` the least/greatest score and
    ``diff = hi - lo``, each score becomes ``int64(float64(100) * (float64(s - lo) / float64(diff)))``
    (0 everywhere when diff is 0): the same float64 operations, truncated toward zero as Go's
    conversion. scores: (n,) int64, 1-d C-contiguous, writable."""
    cdef cnp.ndarray arr = _vector(scores, cnp.NPY_INT64, True, "normalize")
    cdef Py_ssize_t n = cnp.PyArray_DIM(arr, 0), i
    cdef int64_t* s_ = <int64_t*>cnp.PyArray_DATA(arr)
    cdef int64_t lo, hi, diff
    if n == 0:
        return
    with nogil:
        lo = s_[0]
        hi = s_[0]
        for i in range(1, n):
            if s_[i] < lo:
                lo = s_[i]
            if s_[i] > hi:
                hi = s_[i]
        diff = hi - lo
        for i in range(n):
            if diff > 0:
                s_[i] = <int64_t>(<double>100.0 * (<double>(s_[i] - lo) / <double>diff))
            else:
                s_[i] = 0


def weighted_domain_sums(list counts, list weights, Py_ssize_t n_values):
    """PreScore's per-domain map of one topology key from count subscriptions, in one pass:
    ``(sums, present, any_present)`` with ``sums[d] = sum_k weights[k] * counts[k][d]`` and
    ``present[d] = sum_k counts[k][d] > 0`` ("some contribution landed": the subscriptions' counts
    are never negative), over ``d < n_values``; a ``counts[k]`` shorter than ``n_values`` (label
    values only grow) reads 0 past its end. counts: (V_k,) int64 arrays; weights: ints; sums:
    (n_values,) int64; present: (n_values,) bool. What DomainSums.add_all gives for every row of the
    table, without a temporary array per subscription and weight."""
    cdef Py_ssize_t k, d, v, m = len(counts)
    cdef int64_t w
    cdef const int64_t* c
    cdef cnp.ndarray c_arr
    if len(weights) != m:
        raise ValueError(f"weighted_domain_sums: {m} count arrays, {len(weights)} weights")
    if n_values < 0:
        raise ValueError(f"weighted_domain_sums: n_values {n_values} < 0")
    sums_arr = np.empty(n_values, dtype=np.int64)
    present_arr = np.empty(n_values, dtype=np.bool_)
    cdef int64_t* sums = <int64_t*>cnp.PyArray_DATA(<cnp.ndarray>sums_arr)
    cdef uint8_t* present = <uint8_t*>cnp.PyArray_DATA(<cnp.ndarray>present_arr)
    cdef int64_t x
    cdef uint8_t hit, any_hit = 0
    if m == 1:
        # one subscription (a pod's one preferred term on the hostname: 5,000 domains a cycle; the
        # existing pods' required terms matching the incoming class: one zone): both outputs in
        # one pass, without the unweighted sum's array
        c_arr = _vector(counts[0], cnp.NPY_INT64, False, "weighted_domain_sums counts")
        c = <const int64_t*>cnp.PyArray_DATA(c_arr)
        w = weights[0]
        v = min(cnp.PyArray_DIM(c_arr, 0), n_values)
        with nogil:
            for d in range(v):  # (branch-free: the compiler vectorizes it)
                x = c[d]
                sums[d] = w * x
                hit = x > 0
                present[d] = hit
                any_hit |= hit
            for d in range(v, n_values):
                sums[d] = 0
                present[d] = 0
        return sums_arr, present_arr, any_hit != 0
    cdef const int64_t* c1
    cdef cnp.ndarray c1_arr
    cdef int64_t w1, y
    if m == 2:
        # two subscriptions (a pod's own preferred term and the existing pods' terms matching it on
        # one key: the preferred workloads' hostname map, 5,000 domains a cycle): one branch-free
        # pass where both have the domain, without zeroed sums and an unweighted landed array
        # (13.6 -> 8.6 us a call at 5,000 domains, interleaved in one process; the generic path
        # below stays for three or more: a loop over the subscriptions inside the domain loop was
        # slower there than its pass per subscription)
        c_arr = _vector(counts[0], cnp.NPY_INT64, False, "weighted_domain_sums counts")
        c1_arr = _vector(counts[1], cnp.NPY_INT64, False, "weighted_domain_sums counts")
        c = <const int64_t*>cnp.PyArray_DATA(c_arr)
        c1 = <const int64_t*>cnp.PyArray_DATA(c1_arr)
        w = weights[0]
        w1 = weights[1]
        v = min(cnp.PyArray_DIM(c_arr, 0), cnp.PyArray_DIM(c1_arr, 0), n_values)
        with nogil:
            for d in range(v):
                x = c[d]
                y = c1[d]
                sums[d] = w * x + w1 * y
                hit = x + y > 0
                present[d] = hit
                any_hit |= hit
            for d in range(v, n_values):  # past a shorter array's end its counts read 0
                x = c[d] if d < cnp.PyArray_DIM(c_arr, 0) else 0
                y = c1[d] if d < cnp.PyArray_DIM(c1_arr, 0) else 0
                sums[d] = w * x + w1 * y
                hit = x + y > 0
                present[d] = hit
                any_hit |= hit
        return sums_arr, present_arr, any_hit != 0
    landed_arr = np.zeros(n_values, dtype=np.int64)
    cdef int64_t* landed = <int64_t*>cnp.PyArray_DATA(<cnp.ndarray>landed_arr)
    with nogil:
        for d in range(n_values):
            sums[d] = 0
    for k in range(m):
        c_arr = _vector(counts[k], cnp.NPY_INT64, False, "weighted_domain_sums counts")
        c = <const int64_t*>cnp.PyArray_DATA(c_arr)
        w = weights[k]
        v = min(cnp.PyArray_DIM(c_arr, 0), n_values)
        with nogil:
            for d in range(v):
                sums[d] += w * c[d]
                landed[d] += c[d]
    with nogil:
        for d in range(n_values):
            hit = landed[d] > 0
            present[d] = hit
            any_hit |= hit
    return sums_arr, present_arr, any_hit != 0


def domains_present(code_by_row, rows, Py_ssize_t n_codes, Py_ssize_t stop_at=-1):
    """``(present, k)``: ``present`` (n_codes,) uint8, 1 for each code ``0 .. n_codes - 1`` some row
    of ``rows`` has in ``code_by_row`` (C,), and ``k`` how many are; codes outside ``[0, n_codes)``
    are not counted, and the pass stops once ``stop_at`` codes are seen (every code when negative
    or past ``n_codes``). PodTopologySpread's PreScore: the domains its filtered nodes register (the
    last code: the ``""`` domain of nodes without the key, when virtual); its caller passes as
    ``stop_at`` how many codes the rows can hold at all (the distinct codes of every node: the
    virtual code, held by no node when every node has the key, would otherwise keep the pass going
    to the last row). code_by_row: (C,) int64; rows: (n,) int64 (1-d C-contiguous, checked without
    a buffer, as :func:`_vector`)."""
    cdef cnp.ndarray c_arr = _vector(code_by_row, cnp.NPY_INT64, False, "domains_present code_by_row")
    cdef cnp.ndarray r_arr = _vector(rows, cnp.NPY_INT64, False, "domains_present rows")
    cdef Py_ssize_t n = cnp.PyArray_DIM(r_arr, 0), width = cnp.PyArray_DIM(c_arr, 0), i, seen = 0
    cdef const int64_t* c_ = <const int64_t*>cnp.PyArray_DATA(c_arr)
    cdef const int64_t* r_ = <const int64_t*>cnp.PyArray_DATA(r_arr)
    cdef cnp.npy_intp dim = n_codes if n_codes > 0 else 0
    cdef cnp.ndarray present_arr = cnp.PyArray_ZEROS(1, &dim, cnp.NPY_UINT8, 0)
    cdef uint8_t* present = <uint8_t*>cnp.PyArray_DATA(present_arr)
    cdef int64_t code, row
    if n_codes <= 0:
        return present_arr, 0
    if stop_at < 0 or stop_at > n_codes:
        stop_at = n_codes
    cdef int64_t bad_row = 0
    cdef bint row_bad = False
    with nogil:
        if stop_at > 0:
            for i in range(n):
                row = r_[i]
                if row < 0 or row >= width:  # (checked on the rows visited: the pass stops early)
                    bad_row, row_bad = row, True
                    break
                code = c_[row]
                if 0 <= code < n_codes and not present[code]:
                    present[code] = 1
                    seen += 1
                    if seen >= stop_at:
                        break
    if row_bad:
        raise IndexError(f"domains_present: row {bad_row} outside a column of {width} rows")
    return present_arr, seen


cdef inline int64_t _go_round(double x) noexcept nogil:
    """``int64(math.Round(x))`` for ``|x| < 2**63``: the nearest integer, halves away from zero,
    without libm's ``round`` call. ``x - trunc(x)`` is exact for every finite double (the fraction
    of ``|x| < 1`` is ``x``; above, ``trunc(x)`` and ``x`` are within a factor 2: Sterbenz), so the
    comparison with 0.5 decides as ``round`` does."""
    cdef int64_t t = <int64_t>x  # toward zero
    cdef double f = x - <double>t
    if f >= 0.5:
        t += 1
    elif f <= -0.5:
        t -= 1
    return t


cdef struct _SpreadPart:
    const int32_t* codes       # (C,) the constraint's label column
    const int64_t* counts      # (C,) per row (present NULL) or (V,) per label code
    const uint8_t* present     # (V,) registered label codes, or NULL
    Py_ssize_t t               # codes below it index counts/present (present: min of both lengths)
    double weight
    double base


def spread_scores(list parts, rows, out):
    """PodTopologySpread's Score for each row of ``rows`` (upstream ``Score``): ``out[i] =
    round(sum)``, half away from zero (Go's ``math.Round``), of one term ``float64(count) * weight +
    base`` per part, in the parts' order, from ``sum = 0.0``, for the parts whose label code at the
    row is not negative. A part is ``(codes, counts, present, weight, base)``: ``codes`` (C,) int32
    is the constraint's label column; with ``present`` None, ``counts`` (C,) int64 is per row (a
    hostname constraint: each node is its own domain); else ``counts`` (int64) and ``present``
    (uint8) are per label code, the count of a code ``present`` does not mark being 0 (a domain no
    filtered node registered). Built with ``-ffp-contract=off``: the same float64 operations in the
    same order as upstream's loop, so the sums and their rounding are bit-equal. A code past
    ``counts`` or ``present`` is an error (the caller's arrays cover the table's label values).
    rows: (n,) int64; out: (>= n,) int64, writable; all 1-d C-contiguous (checked without a buffer,
    as :func:`_vector`: Score's per-cycle call, where the memoryviews cost more than the rows)."""
    cdef cnp.ndarray r_arr = _vector(rows, cnp.NPY_INT64, False, "spread_scores rows")
    cdef cnp.ndarray o_arr = _vector(out, cnp.NPY_INT64, True, "spread_scores out")
    cdef Py_ssize_t n = cnp.PyArray_DIM(r_arr, 0), k = len(parts), i, j, width = -1, t
    cdef const int64_t* r_ = <const int64_t*>cnp.PyArray_DATA(r_arr)
    cdef int64_t* o_ = <int64_t*>cnp.PyArray_DATA(o_arr)
    cdef _SpreadPart[8] small
    cdef _SpreadPart* ps = small
    cdef _SpreadPart* p
    cdef cnp.ndarray a
    cdef double s
    cdef int64_t count, row
    cdef int32_t code
    cdef Py_ssize_t bad = -1
    cdef int64_t bad_row = 0
    cdef bint row_bad = False
    cdef int64_t* scores
    cdef bint no_memory = False
    if cnp.PyArray_DIM(o_arr, 0) < n:
        raise ValueError(f"spread_scores: out has {cnp.PyArray_DIM(o_arr, 0)} entries for {n} rows")
    if k > 8:
        ps = <_SpreadPart*>PyMem_Malloc(k * sizeof(_SpreadPart))
        if ps == NULL:
            raise MemoryError()
    try:
        for j in range(k):  # (the arrays stay alive: ``parts`` holds them for the call)
            codes_obj, counts_obj, present_obj, weight, base = parts[j]
            p = &ps[j]
            a = _vector(codes_obj, cnp.NPY_INT32, False, "spread_scores codes")
            p.codes = <const int32_t*>cnp.PyArray_DATA(a)
            if width < 0 or cnp.PyArray_DIM(a, 0) < width:
                width = cnp.PyArray_DIM(a, 0)
            a = _vector(counts_obj, cnp.NPY_INT64, False, "spread_scores counts")
            p.counts = <const int64_t*>cnp.PyArray_DATA(a)
            p.t = cnp.PyArray_DIM(a, 0)
            if present_obj is None:
                p.present = NULL
                if p.t < width or width < 0:
                    width = p.t
            else:
                a = _vector(present_obj, cnp.NPY_UINT8, False, "spread_scores present")
                p.present = <const uint8_t*>cnp.PyArray_DATA(a)
                if cnp.PyArray_DIM(a, 0) < p.t:
                    p.t = cnp.PyArray_DIM(a, 0)
            p.weight = weight
            p.base = base
        with nogil:
            if k == 1 and ps[0].present != NULL and ps[0].t <= n:
                # one constraint by label code (the common soft constraint), fewer codes than rows:
                # each code's rounded score once (the same sum, 0.0 + term), then a gather
                p = &ps[0]
                scores = <int64_t*>malloc((p.t if p.t > 0 else 1) * sizeof(int64_t))
                if scores == NULL:
                    no_memory = True
                else:
                    for j in range(p.t):
                        count = p.counts[j] if p.present[j] else 0
                        scores[j] = _go_round(0.0 + (<double>count * p.weight + p.base))
                    for i in range(n):
                        row = r_[i]
                        if row < 0 or row >= width:
                            bad_row, row_bad = row, True
                            break
                        code = p.codes[row]
                        if code < 0:
                            o_[i] = 0  # (round(0.0): no term)
                        elif code >= p.t:
                            bad = p.t
                            break
                        else:
                            o_[i] = scores[code]
                    free(scores)
            else:
                for i in range(n):
                    row = r_[i]
                    if k and (row < 0 or row >= width):
                        bad_row, row_bad = row, True
                        break
                    s = 0.0
                    for j in range(k):
                        p = &ps[j]
                        code = p.codes[row]
                        if code >= 0:
                            if p.present == NULL:
                                count = p.counts[row]
                            elif code >= p.t:
                                bad = p.t
                                break
                            else:
                                count = p.counts[code] if p.present[code] else 0
                            s = s + (<double>count * p.weight + p.base)
                    if bad >= 0:
                        break
                    o_[i] = _go_round(s)
    finally:
        if ps != small:
            PyMem_Free(ps)
    if no_memory:
        raise MemoryError()
    if row_bad:
        raise IndexError(f"spread_scores: row {bad_row} outside a column of {width} rows")
    if bad >= 0:
        raise ValueError(f"spread_scores: a label code past the {bad} domain counts")
