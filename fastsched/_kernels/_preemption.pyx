# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Kernels of DefaultPreemption's vectorized dry run (upstream ``SelectVictimsOnNode``, v1.34).

The dry run keeps the bound pods as columns in a *pool* (``prio`` int64, ``start`` float64 with
+inf for a pod that has not started, ``req`` (P, R) int64 effective requests); each node's pods are
one contiguous range of pool entries in the node's pod-list order, so an entry index orders the
pods of a node as upstream's NodeInfo does (the last tie-break of the victim order).

:func:`gather_lower` collects the preemptor's potential victims (priority below its own) node by
node; :func:`select_victims` then runs, for every node at once, what upstream does for one:
sort by ``MoreImportantPod``, split by PodDisruptionBudget (``filterPodsWithPDBViolation``'s running
counts), reprieve the PDB-violating pods first and then the others, each kept when the node still
fits the preemptor with it (NodeResourcesFit's checks and NodePorts' conflicts, the pod-dependent
filters that have this additive form), and order the victims as upstream's final re-sort does.
"""
from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.stdlib cimport free, malloc

#: Upstream adds MaxInt32 + 1 to each victim's priority before summing (pickOneNodeForPreemption).
cdef int64_t PRIORITY_OFFSET = 2147483648


def gather_lower(const int64_t[::1] starts, const int64_t[::1] counts, const int64_t[::1] prio,
                 int64_t priority, const int64_t[:, ::1] req,
                 int64_t[::1] seg, int64_t[::1] entries, int64_t[:, ::1] lower_req):
    """The pool entries of each node (range ``starts[w]``, ``counts[w]``) with priority below
    ``priority``, in entry order: node ``w`` gets ``entries[seg[w]:seg[w + 1]]``; ``lower_req[w]``
    is the sum of their requests. Returns the number of entries (``seg[W]``).

    ``seg`` is (W + 1,), ``entries`` holds at least ``sum(counts)``, ``lower_req`` is (W, R), zeroed here.
    """
    cdef Py_ssize_t nw = starts.shape[0]
    cdef Py_ssize_t nr = req.shape[1]
    cdef Py_ssize_t w, j
    cdef int64_t e, end, m = 0
    if seg.shape[0] != nw + 1 or lower_req.shape[0] != nw or lower_req.shape[1] != nr:
        raise ValueError("gather_lower: output shapes do not match the nodes")
    with nogil:
        for w in range(nw):
            seg[w] = m
            for j in range(nr):
                lower_req[w, j] = 0
            e = starts[w]
            end = e + counts[w]
            while e < end:
                if prio[e] < priority:
                    entries[m] = e
                    m += 1
                    for j in range(nr):
                        lower_req[w, j] += req[e, j]
                e += 1
        seg[nw] = m
    return m


cdef inline bint _more_important(int64_t a, int64_t b, const int64_t* prio, const double* start) noexcept nogil:
    """Upstream ``MoreImportantPod`` (higher priority, then earlier start), entry order on ties."""
    if prio[a] != prio[b]:
        return prio[a] > prio[b]
    if start[a] != start[b]:
        return start[a] < start[b]
    return a < b


cdef inline bint _final_before(int64_t a, int64_t b, const int64_t* prio, const double* start,
                               const uint8_t* viol_a, const uint8_t* viol_b) noexcept nogil:
    """The victims' final order: importance, then (upstream's stable re-sort of violating victims
    followed by the others) PDB-violating first, then entry order."""
    if prio[a] != prio[b]:
        return prio[a] > prio[b]
    if start[a] != start[b]:
        return start[a] < start[b]
    if viol_a[0] != viol_b[0]:
        return viol_a[0] > viol_b[0]
    return a < b


cdef void _sort_entries(int64_t* items, int64_t* tmp, Py_ssize_t n, const int64_t* prio,
                        const double* start) noexcept nogil:
    """Sort pool entries most important first (insertion sort for short runs, then merges)."""
    cdef Py_ssize_t i, k, width, lo, mid, hi, a, b, out
    cdef int64_t x
    cdef Py_ssize_t run = 16
    lo = 0
    while lo < n:
        hi = lo + run if lo + run < n else n
        for i in range(lo + 1, hi):
            x = items[i]
            k = i - 1
            while k >= lo and _more_important(x, items[k], prio, start):
                items[k + 1] = items[k]
                k -= 1
            items[k + 1] = x
        lo = hi
    width = run
    while width < n:
        lo = 0
        while lo < n:
            mid = lo + width if lo + width < n else n
            hi = lo + 2 * width if lo + 2 * width < n else n
            a = lo
            b = mid
            out = lo
            while a < mid and b < hi:
                if _more_important(items[b], items[a], prio, start):
                    tmp[out] = items[b]
                    b += 1
                else:
                    tmp[out] = items[a]
                    a += 1
                out += 1
            while a < mid:
                tmp[out] = items[a]
                a += 1
                out += 1
            while b < hi:
                tmp[out] = items[b]
                b += 1
                out += 1
            lo = hi
        for i in range(n):
            items[i] = tmp[i]
        width *= 2


def select_victims(const int64_t[::1] seg, const int64_t[::1] entries, const uint8_t[::1] active,
                   const int64_t[::1] prio, const double[::1] start, const int64_t[:, ::1] req,
                   const uint8_t[::1] conflict,
                   const int64_t[::1] pdb_ptr, const int32_t[::1] pdb_ids, const int64_t[::1] pdb_allowed,
                   bint check_fit, const int64_t[::1] cols, const int64_t[::1] wants,
                   const int64_t[:, ::1] alloc, const int64_t[::1] allowed_pods,
                   const int64_t[:, ::1] base_used, const int64_t[::1] base_count,
                   int64_t[::1] victims, uint8_t[::1] violating,
                   int64_t[::1] n_victims, int64_t[::1] n_violating, int64_t[::1] top_priority,
                   int64_t[::1] sum_priority, double[::1] first_start):
    """SelectVictimsOnNode's steps 4-7 on every node ``w`` with ``active[w]`` (the preemptor fits
    once all its potential victims ``entries[seg[w]:seg[w + 1]]`` are gone).

    Per potential victim ``m`` (an index into ``entries``): ``conflict[m]`` says it uses a host port
    the preemptor wants; its PDBs are ``pdb_ids[pdb_ptr[m]:pdb_ptr[m + 1]]`` (indices into
    ``pdb_allowed``, the budgets' ``disruptionsAllowed``, counted down per node as upstream does).
    With ``check_fit``, NodeResourcesFit's checks apply: ``wants[j]`` of table column ``cols[j]``
    against ``alloc[w, j]`` (the node's allocatable of that column) minus the node's usage, which
    starts at ``base_used[w, j]`` (requests left once every potential victim is gone, nominated pods
    included) and ``base_count[w]`` pods, and "Too many pods" against ``allowed_pods[w]``.

    Outputs per node: ``victims[seg[w]:seg[w] + n_victims[w]]`` the victims' entries in upstream's
    final order, ``n_violating[w]`` how many violate a PDB, and for pickOneNodeForPreemption the
    first victim's priority (``top_priority``), the sum of (priority + 2^31) over the victims
    (``sum_priority``) and the first victim's start (``first_start``: the earliest start among the
    highest-priority victims). ``violating[m]`` marks each potential victim's PDB split.
    """
    cdef Py_ssize_t nw = seg.shape[0] - 1
    cdef Py_ssize_t nk = cols.shape[0]
    cdef Py_ssize_t n_pdbs = pdb_allowed.shape[0]
    cdef Py_ssize_t w, t, j, q, group, lo, hi, n, nv, n_touched, i, k, longest = 0
    cdef int64_t m, e, c, r, cnt, d, x
    cdef bint ok, viol
    cdef int64_t* order
    cdef int64_t* tmp
    cdef int64_t* used
    cdef int64_t* left
    cdef uint8_t* touched
    cdef int64_t* touched_list
    cdef int64_t* minv
    cdef const int64_t* prio_p = &prio[0] if prio.shape[0] else NULL
    cdef const double* start_p = &start[0] if start.shape[0] else NULL
    for w in range(nw):
        if seg[w + 1] - seg[w] > longest:
            longest = seg[w + 1] - seg[w]
    order = <int64_t*> malloc((longest + 1) * sizeof(int64_t))
    tmp = <int64_t*> malloc((longest + 1) * sizeof(int64_t))
    minv = <int64_t*> malloc((longest + 1) * sizeof(int64_t))
    used = <int64_t*> malloc((nk + 1) * sizeof(int64_t))
    left = <int64_t*> malloc((n_pdbs + 1) * sizeof(int64_t))
    touched = <uint8_t*> malloc((n_pdbs + 1) * sizeof(uint8_t))
    touched_list = <int64_t*> malloc((n_pdbs + 1) * sizeof(int64_t))
    # viol flags by pool entry are needed by the final comparison: keep them per local position
    cdef uint8_t* viol_of = <uint8_t*> malloc((longest + 1) * sizeof(uint8_t))
    cdef int64_t* local_of = <int64_t*> malloc((longest + 1) * sizeof(int64_t))
    if (order == NULL or tmp == NULL or minv == NULL or used == NULL or left == NULL or touched == NULL
            or touched_list == NULL or viol_of == NULL or local_of == NULL):
        free(order); free(tmp); free(minv); free(used); free(left); free(touched); free(touched_list)
        free(viol_of); free(local_of)
        raise MemoryError()
    try:
        with nogil:
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
                # 4. most important first (entries sort by the pool's prio/start, ties by entry)
                for t in range(n):
                    order[t] = entries[lo + t]
                _sort_entries(order, tmp, n, prio_p, start_p)
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
                    for q in range(pdb_ptr[m], pdb_ptr[m + 1]):
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
                for j in range(nk):
                    used[j] = base_used[w, j]
                cnt = base_count[w]
                nv = 0
                for group in range(2):
                    for t in range(n):
                        if viol_of[t] != (1 - group):
                            continue
                        m = local_of[t]
                        e = order[t]
                        ok = not conflict[m]
                        if ok and check_fit:
                            if cnt + 2 > allowed_pods[w]:  # with it back and the preemptor on top
                                ok = 0
                            else:
                                for j in range(nk):
                                    c = cols[j]
                                    r = req[e, c] if c >= 0 else 0
                                    if wants[j] > alloc[w, j] - (used[j] + r):
                                        ok = 0
                                        break
                        if ok:
                            for j in range(nk):
                                c = cols[j]
                                if c >= 0:
                                    used[j] += req[e, c]
                            cnt += 1
                        else:
                            minv[nv] = t  # a local position: order[t], viol_of[t]
                            nv += 1
                # 7. the victims in the final order (importance, violating first, entry order)
                for i in range(1, nv):
                    x = minv[i]
                    k = i - 1
                    while k >= 0 and _final_before(order[x], order[minv[k]], prio_p, start_p,
                                                   &viol_of[x], &viol_of[minv[k]]):
                        minv[k + 1] = minv[k]
                        k -= 1
                    minv[k + 1] = x
                n_victims[w] = nv
                for i in range(nv):
                    e = order[minv[i]]
                    victims[lo + i] = e
                    n_violating[w] += viol_of[minv[i]]
                    sum_priority[w] += prio[e] + PRIORITY_OFFSET
                if nv > 0:
                    top_priority[w] = prio[order[minv[0]]]
                    first_start[w] = start[order[minv[0]]]
    finally:
        free(order); free(tmp); free(minv); free(used); free(left); free(touched); free(touched_list)
        free(viol_of); free(local_of)
    return None


def settle_start_times(object[::1] pods, const int64_t[::1] entries, double[::1] start):
    """Re-read ``status.startTime`` of the ``entries`` whose ``start`` is +inf (not started when
    loaded) from their Pod objects (``pods``): the scheduler sets a bound pod's start on the Pod
    itself. Returns how many changed."""
    cdef Py_ssize_t i, n = entries.shape[0]
    cdef int64_t e
    cdef double inf = float("inf")
    cdef object t
    cdef Py_ssize_t changed = 0
    for i in range(n):
        e = entries[i]
        if start[e] == inf:
            t = pods[e].start_time
            if t is not None:
                start[e] = t
                changed += 1
    return changed
