"""The dry-run window's kernels against the NumPy forms they replace (random inputs)."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from fastsched._kernels import _preemption


@pytest.mark.parametrize("seed", range(4))
def test_fit_verdicts_as_the_numpy_checks(seed):
    """``fit_verdicts`` against NodeResourcesFit's checks as arrays: "Too many pods", then each
    checked resource's free amount, a column of -1 (no node has the resource) having 0 free;
    it only clears, so a node another filter failed stays failed."""
    rng = np.random.default_rng(seed)
    cap, width, n = 30, 4, 25
    alloc = rng.integers(4, 20, (cap, width))
    allowed = rng.integers(1, 9, cap)
    rows = rng.choice(cap, n, replace=False).astype(np.int64)
    used = rng.integers(-2, 12, (n, width))
    count = rng.integers(0, 5, n)
    outcomes = set()
    for cols, wants in ((np.array([0, 2], dtype=np.int64), rng.integers(0, 6, 2)),
                        (np.array([1, -1, 3], dtype=np.int64), np.array([2, 0, 3], dtype=np.int64)),
                        (np.array([1, -1], dtype=np.int64), np.array([0, 1], dtype=np.int64)),
                        (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))):
        fail = count + 1 > allowed[rows]
        if len(cols):
            safe = np.where(cols >= 0, cols, 0)
            free = alloc[rows][:, safe] - used[:, safe]
            free[:, cols < 0] = 0
            fail |= (wants > free).any(axis=1)
        before = rng.random(n) < 0.8
        ok = before.copy()
        _preemption.fit_verdicts(rows, count, allowed, alloc, used, cols, wants, ok.view(np.uint8))
        assert (ok == (before & ~fail)).all()
        outcomes.update(fail.tolist())
    assert outcomes == {True, False}  # both are exercised
    with pytest.raises(IndexError):
        _preemption.fit_verdicts(np.array([cap], dtype=np.int64), count[:1], allowed, alloc, used[:1],
                                 cols, wants, np.ones(1, dtype=np.uint8))


@pytest.mark.parametrize("seed", range(4))
def test_settle_segments_reads_the_volatile_starts_of_the_given_nodes(seed):
    """Only the volatile entries of the nodes asked about are read again: a start set since the
    load is taken and the entry stops being volatile; a pod still not started stays volatile;
    other nodes' entries and non-volatile ones keep what they had."""
    rng = np.random.default_rng(seed)
    inf = float("inf")
    size = 60
    start = np.where(rng.random(size) < 0.5, inf, rng.integers(1, 100, size).astype(float))
    volatile = (start == inf) & (rng.random(size) < 0.7)
    pods = np.empty(size, dtype=object)
    now = {}
    for e in range(size):  # what the Pod objects say now: some volatile pods started since
        t = float(rng.integers(100, 200)) if rng.random() < 0.5 else None
        now[e] = t
        pods[e] = SimpleNamespace(start_time=t)
    entries = rng.permutation(size).astype(np.int64)
    seg = np.array([0, 7, 7, 20, 33, 41, 60], dtype=np.int64)
    nodes = np.array([0, 2, 5], dtype=np.int64)
    asked = set(np.concatenate([entries[seg[w]:seg[w + 1]] for w in nodes]).tolist())
    want_start, want_volatile = start.copy(), volatile.copy()
    for e in asked:
        if volatile[e] and now[e] is not None:
            want_start[e] = now[e]
            want_volatile[e] = False
    got_start, got_volatile = start.copy(), volatile.copy()
    changed = _preemption.settle_segments(pods, entries, seg, nodes, got_start, got_volatile.view(np.uint8))
    assert changed == int((want_start != start).sum()) > 0
    assert (got_start == want_start).all() and (got_volatile == want_volatile).all()
    assert (got_volatile & ~volatile).sum() == 0 and (volatile & got_volatile).any()


def _staged_pick(viol, top, total, nvic, first):
    """pickOneNodeForPreemption's default criteria as upstream applies them: keep the candidates
    best by each criterion in turn, then the first left (the NumPy form ``pick`` had)."""
    idx = np.arange(len(viol))
    for values, best in ((viol, np.min), (top, np.min), (total, np.min), (nvic, np.min), (first, np.max)):
        v = values[idx]
        idx = idx[v == best(v)]
    return int(idx[0])


@pytest.mark.parametrize("seed", range(6))
def test_pick_candidate_as_the_staged_criteria(seed):
    """``pick_candidate`` against the criteria applied one after the other, on small value ranges
    (ties at every level, +inf starts), and ``VectorCandidates.pick`` against both its paths."""
    from fastsched.plugins.defaultpreemption.vectorized import VectorCandidates

    rng = np.random.default_rng(seed)
    seen_levels = set()
    for _ in range(300):
        n = int(rng.integers(1, 12))
        viol, top, total, nvic = (rng.integers(0, 2, n).astype(np.int64) for _ in range(4))
        first = rng.choice(np.array([0.0, 5.0, 7.5, np.inf]), n)
        want = _staged_pick(viol, top, total, nvic, first)
        assert _preemption.pick_candidate(viol, top, total, nvic, first) == want
        # how far the staged filter had to go (every criterion decides some cases)
        idx = np.arange(n)
        for level, values in enumerate((viol, top, total, nvic, -first)):
            idx = idx[values[idx] == values[idx].min()]
            if len(idx) == 1:
                seen_levels.add(level)
                break
        else:
            seen_levels.add(5)  # full tie: the first
        cands = VectorCandidates([f"n{i}" for i in range(n)], np.empty(0, dtype=object), np.zeros(0, dtype=np.int64),
                                 np.zeros(n, dtype=np.int64), nvic, viol, top, total, first)
        assert cands.pick() == want
        cands.n_victims = nvic.astype(np.int32)  # another dtype: the NumPy path
        assert cands.pick() == want
    assert seen_levels == {0, 1, 2, 3, 4, 5}
    with pytest.raises(ValueError):
        _preemption.pick_candidate(*(np.zeros(0, dtype=np.int64),) * 4, np.zeros(0))
    with pytest.raises(ValueError):
        _preemption.pick_candidate(*(np.zeros(2, dtype=np.int64),) * 4, np.zeros(3))


@pytest.mark.parametrize("seed", range(4))
def test_splice_nominations_as_mask_and_concatenate(seed):
    """``splice_nominations`` against the NumPy form it replaced in ``NominationIndex._follow``:
    the pods off the ``gone`` rows dropped by a mask, the new set concatenated after; None when
    nothing is dropped or added; mismatched lengths refused."""
    rng = np.random.default_rng(seed)
    for _ in range(50):
        q, q2, width = int(rng.integers(0, 12)), int(rng.integers(0, 3)), int(rng.integers(1, 4))

        def arrays(n):
            uids = np.empty(n, dtype=object)
            uids[:] = [f"u{rng.integers(1000)}" for _ in range(n)]
            names = np.empty(n, dtype=object)
            names[:] = [f"n{rng.integers(9)}" for _ in range(n)]
            return (rng.integers(0, 6, n).astype(np.int64), rng.integers(-3, 3, n).astype(np.int64),
                    rng.integers(0, 9, (n, width)).astype(np.int64), uids, names)

        a, b = arrays(q), arrays(q2)
        gone = rng.choice(8, int(rng.integers(0, 3)), replace=False).astype(np.int64)
        keep = ~np.isin(a[0], gone)
        got = _preemption.splice_nominations(*a, gone, *b)
        if keep.all() and not q2:
            assert got is None
            continue
        want = [np.concatenate((x[keep], y)) for x, y in zip(a, b)]
        for g, w in zip(got[:5], want):
            assert g.dtype == w.dtype and g.tolist() == w.tolist()
        assert got[5].tolist() == np.where(keep, np.cumsum(keep) - 1, -1).tolist()
    a = arrays(3)
    with pytest.raises(ValueError):
        _preemption.splice_nominations(a[0][:2], *a[1:], np.zeros(0, dtype=np.int64), *arrays(0))


@pytest.mark.parametrize("seed", range(4))
def test_window_usage_as_the_numpy_form(seed):
    """``window_usage`` against the gather it replaces: each node's pool entries of lower priority
    in entry order, and the row's requests and pod count less theirs; a bad row raises before
    anything is written."""
    rng = np.random.default_rng(seed)
    cap, width, pool = 40, 3, 300
    row_count = rng.integers(0, 7, cap)
    row_start = np.zeros(cap, dtype=np.int64)
    row_start[1:] = np.cumsum(row_count)[:-1] + rng.integers(0, 3, cap - 1).cumsum()  # dead gaps
    size = int(row_start[-1] + row_count[-1])
    assert size <= pool
    prio = rng.integers(0, 10, pool)
    req = rng.integers(0, 50, (pool, width))
    requested = rng.integers(0, 500, (cap, width))
    pod_count = rng.integers(0, 20, cap)
    for priority in (0, 4, 10):
        rows = rng.choice(cap, 25, replace=False).astype(np.int64)
        seg = np.empty(len(rows) + 1, dtype=np.int64)
        used = np.empty((len(rows), width), dtype=np.int64)
        count = np.empty(len(rows), dtype=np.int64)
        entries = _preemption.window_usage(rows, row_start, row_count, prio, priority, req, requested[:, :width],
                                           pod_count, seg, used, count)
        want, want_seg = [], [0]
        for w, r in enumerate(rows.tolist()):
            lower = [e for e in range(row_start[r], row_start[r] + row_count[r]) if prio[e] < priority]
            want += lower
            want_seg.append(len(want))
            assert (used[w] == requested[r] - req[lower].sum(axis=0)).all()
            assert count[w] == pod_count[r] - len(lower)
        assert entries.tolist() == want and seg.tolist() == want_seg
    bad = np.array([0, cap], dtype=np.int64)
    seg, used, count = np.full(3, -7, dtype=np.int64), np.full((2, width), -7, dtype=np.int64), np.full(2, -7)
    with pytest.raises(IndexError):
        _preemption.window_usage(bad, row_start, row_count, prio, 5, req, requested, pod_count, seg, used, count)
    assert (seg == -7).all() and (used == -7).all() and (count == -7).all()


@pytest.mark.parametrize("seed", range(6))
def test_select_victims_reads_the_table_rows_and_columns_as_gathered(seed):
    """``select_victims`` reading allocatable, allowed pods and the base usage through the window's
    table rows and the checked columns (a column of -1 having 0 allocatable and 0 in use) gives
    what it gives on the gathered arrays (rows 0..W-1, columns 0..K-1, the -1 columns zeroed)."""
    rng = np.random.default_rng(100 + seed)
    cap, width, w = 30, 4, 12
    pool = 200
    prio = rng.integers(0, 5, pool)
    start = np.where(rng.random(pool) < 0.3, np.inf, rng.integers(0, 50, pool).astype(float))
    req = rng.integers(0, 40, (pool, width))
    counts = rng.integers(0, 8, w)
    seg = np.zeros(w + 1, dtype=np.int64)
    seg[1:] = np.cumsum(counts)
    entries = np.sort(rng.choice(pool, int(seg[-1]), replace=False)).astype(np.int64)
    for i in range(w):  # ascending within each node, as the pool's ranges are
        entries[seg[i]:seg[i + 1]].sort()
    m = len(entries)
    n_pdbs = 3
    pdb_ids_list = [rng.choice(n_pdbs, rng.integers(0, 3), replace=False).tolist() for _ in range(m)]
    pdb_ptr = np.zeros(m + 1, dtype=np.int64)
    pdb_ptr[1:] = np.cumsum([len(x) for x in pdb_ids_list])
    pdb_ids = np.array([d for x in pdb_ids_list for d in x], dtype=np.int32)
    pdb_allowed = rng.integers(0, 3, n_pdbs)
    conflict = (rng.random(m) < 0.1).astype(np.uint8)
    active = (rng.random(w) < 0.8).astype(np.uint8)
    rows = rng.choice(cap, w, replace=False).astype(np.int64)
    alloc = rng.integers(100, 200, (cap, width))
    allowed = rng.integers(3, 12, cap)
    used = rng.integers(0, 120, (w, width))
    count = rng.integers(0, 5, w)
    seen = set()
    for cols in (np.array([0, 2], dtype=np.int64), np.array([3, -1, 1], dtype=np.int64),
                 np.array([-1], dtype=np.int64), np.zeros(0, dtype=np.int64)):
        wants = rng.integers(0, 90, len(cols))
        safe = np.where(cols >= 0, cols, 0)
        g_alloc = np.ascontiguousarray(alloc[rows][:, safe])
        g_used = np.ascontiguousarray(used[:, safe])
        g_req = np.ascontiguousarray(req[:, safe])
        g_alloc[:, cols < 0] = 0
        g_used[:, cols < 0] = 0
        g_req[:, cols < 0] = 0

        def run(rows_, cols_, alloc_, allowed_, used_, req_):
            out = [np.zeros(m, dtype=np.int64), np.zeros(m, dtype=np.uint8)] + [
                np.zeros(w, dtype=np.int64) for _ in range(4)] + [np.zeros(w, dtype=np.float64)]
            _preemption.select_victims(seg, entries, active, prio, start, req_, conflict, pdb_ptr, pdb_ids,
                                       pdb_allowed, True, cols_, wants, rows_, alloc_, allowed_, used_, count, *out)
            return out

        got = run(rows, cols, alloc, allowed, used, req)
        want = run(np.arange(w, dtype=np.int64), np.arange(len(cols), dtype=np.int64), g_alloc,
                   np.ascontiguousarray(allowed[rows]), g_used, g_req)
        for a, b in zip(got, want):
            assert np.array_equal(a, b)
        seen.update(got[2][active == 1].tolist())
    assert len(seen) > 2  # nodes with different victim counts
    with pytest.raises(IndexError):
        run(np.full(w, cap, dtype=np.int64), cols, alloc, allowed, used, req)



@pytest.mark.parametrize("seed", range(6))
def test_select_victims_stops_where_the_walk_stops(seed):
    """``select_victims`` with the stopping rule (``stop_k``, the candidates before the window)
    against the full pass followed by ``walk_stop``: the same stop, the same outputs up to it, and
    no victims after it; without a stop, every output as the full pass's."""
    rng = np.random.default_rng(300 + seed)
    width = 2
    stops = set()
    for _ in range(60):
        w = int(rng.integers(1, 30))
        pool = 400
        prio = rng.integers(0, 5, pool)
        start = np.where(rng.random(pool) < 0.3, np.inf, rng.integers(0, 50, pool).astype(float))
        req = rng.integers(0, 40, (pool, width))
        counts = rng.integers(0, 6, w)
        seg = np.zeros(w + 1, dtype=np.int64)
        seg[1:] = np.cumsum(counts)
        entries = np.sort(rng.choice(pool, int(seg[-1]), replace=False)).astype(np.int64)
        m = len(entries)
        n_pdbs = 2
        lists = [rng.choice(n_pdbs, rng.integers(0, 2), replace=False).tolist() for _ in range(m)]
        pdb_ptr = np.zeros(m + 1, dtype=np.int64)
        pdb_ptr[1:] = np.cumsum([len(x) for x in lists])
        pdb_ids = np.array([d for x in lists for d in x], dtype=np.int32)
        pdb_allowed = rng.integers(0, 3, n_pdbs)
        conflict = (rng.random(m) < 0.1).astype(np.uint8)
        active = (rng.random(w) < 0.8).astype(np.uint8)
        rows = np.arange(w, dtype=np.int64)
        alloc = rng.integers(60, 120, (w, width))
        allowed = rng.integers(2, 8, w)
        used = rng.integers(0, 60, (w, width))
        count = rng.integers(0, 4, w)
        cols = np.arange(width, dtype=np.int64)
        wants = rng.integers(0, 60, width)
        k = int(rng.integers(0, 10))
        nv_before, v_before = int(rng.integers(0, 6)), int(rng.integers(0, 6))

        def run(*stop_rule):
            out = [np.zeros(m, dtype=np.int64), np.zeros(m, dtype=np.uint8)] + [
                np.full(w, -9, dtype=np.int64) for _ in range(4)] + [np.full(w, -9.0)]
            got = _preemption.select_victims(seg, entries, active, prio, start, req, conflict, pdb_ptr, pdb_ids,
                                             pdb_allowed, True, cols, wants, rows, alloc, allowed, used, count, *out,
                                             *stop_rule)
            return got, out

        none, full = run()
        assert none == -1
        kind = np.where((active == 1) & (full[2] > 0), 0, 1).astype(np.int8)
        want_stop = _preemption.walk_stop(kind, full[3], nv_before, v_before, k, 0)[0]
        stop, out = run(k, nv_before, v_before)
        assert stop == want_stop
        end = w if stop < 0 else stop + 1
        for name, a, b in zip(("victims", "violating", "n_victims", "n_violating", "top", "sum", "first"), out, full):
            if name in ("victims", "violating"):  # per potential victim: those of the nodes done
                assert np.array_equal(a[:seg[end]], b[:seg[end]]), name
                assert not a[seg[end]:].any(), name
            else:
                assert np.array_equal(a[:end], b[:end]), name
                assert not a[end:].any(), name
        stops.add(stop >= 0)
    assert stops == {True, False}


def _walk_stop_numpy(kind, n_violating, nv_total, v_total, k, candidate):
    """The NumPy form walk_stop replaced (VectorizedDryRun.run's loop body before it)."""
    is_candidate = kind == candidate
    non_violating = is_candidate & (n_violating == 0)
    cnv = nv_total + np.cumsum(non_violating)
    cv = v_total + np.cumsum(is_candidate & ~non_violating)
    capped_nv, capped_v = np.minimum(cnv, k), np.minimum(cv, k)
    hit = np.flatnonzero(is_candidate & (capped_nv > 0) & (capped_nv + capped_v >= k))
    if hit.size:
        i = int(hit[0])
        return i, int(cnv[i]), int(cv[i])
    return -1, int(cnv[-1]) if len(kind) else nv_total, int(cv[-1]) if len(kind) else v_total


@pytest.mark.parametrize("seed", range(4))
def test_walk_stop_as_the_numpy_rule(seed):
    """``walk_stop`` against the cumulative-sum form of DryRunPreemption's stopping rule: the first
    candidate after which the capped lists hold a non-violating one and reach numCandidates
    together, carried over windows (the counts before the window), and the counts it returns."""
    rng = np.random.default_rng(seed)
    stops = set()
    for _ in range(400):
        w = int(rng.integers(0, 40))
        kind = rng.choice(np.array([0, 1, 2, 3], dtype=np.int8), w, p=[0.5, 0.2, 0.2, 0.1])
        n_violating = np.where(rng.random(w) < 0.4, rng.integers(1, 3, w), 0).astype(np.int64)
        k = int(rng.integers(0, 12))
        nv_total, v_total = int(rng.integers(0, 15)), int(rng.integers(0, 15))
        want = _walk_stop_numpy(kind, n_violating, nv_total, v_total, k, 0)
        got = _preemption.walk_stop(kind, n_violating, nv_total, v_total, k, 0)
        assert tuple(got) == want, (kind, n_violating, nv_total, v_total, k)
        stops.add(got[0] >= 0)
    assert stops == {True, False}


@pytest.mark.parametrize("seed", range(4))
def test_collect_positions_as_the_numpy_selection(seed):
    """``collect_positions`` against the NumPy selection of the dry run's result before the
    stopping position: the first k non-violating then the first k violating candidates, the
    non-candidates, and the positions with no victim left or an Error code."""
    rng = np.random.default_rng(10 + seed)
    for _ in range(400):
        w = int(rng.integers(0, 40))
        kind = rng.choice(np.array([0, 1, 2, 3], dtype=np.int8), w, p=[0.5, 0.2, 0.2, 0.1])
        code = rng.choice(np.array([0, 1, 2, 3], dtype=np.int8), w, p=[0.6, 0.1, 0.2, 0.1])
        n_violating = np.where(rng.random(w) < 0.4, rng.integers(1, 3, w), 0).astype(np.int64)
        end = int(rng.integers(0, w + 1))
        k = int(rng.integers(0, 12))
        head = kind[:end]
        cand = np.flatnonzero(head == 0)
        nv = n_violating[cand] == 0
        want_chosen = np.concatenate((cand[nv][:k], cand[~nv][:k]))
        want_others = np.flatnonzero(head != 0)
        want_errors = np.flatnonzero((head == 3) | (code[:end] == 1))
        chosen, others, errors = _preemption.collect_positions(kind, code, n_violating, end, k, 0, 3, 1)
        assert chosen.dtype == others.dtype == errors.dtype == np.int64
        assert chosen.tolist() == want_chosen.tolist()
        assert others.tolist() == want_others.tolist()
        assert errors.tolist() == want_errors.tolist()


@pytest.mark.parametrize("seed", range(4))
def test_stale_rows_as_the_numpy_compare(seed):
    """``stale_rows`` (PodColumns.refresh) against ``rows[have[rows] != want[rows]]``, in order,
    rows repeated or not, the versions given as strided views too."""
    rng = np.random.default_rng(20 + seed)
    for _ in range(300):
        cap = int(rng.integers(1, 30))
        rows = rng.integers(0, cap, int(rng.integers(0, 25))).astype(np.int64)
        have = rng.integers(0, 3, cap).astype(np.int64)
        want = np.where(rng.random(cap) < 0.7, have, have + rng.choice(np.array([-1, 1]), cap))
        got = _preemption.stale_rows(rows, have, want)
        assert got.dtype == np.int64 and got.tolist() == rows[have[rows] != want[rows]].tolist()
        wide = np.repeat(want, 2)[::2]  # a strided view of the same values
        assert _preemption.stale_rows(rows, have, wide).tolist() == got.tolist()
    with pytest.raises(IndexError):
        _preemption.stale_rows(np.array([5], dtype=np.int64), np.zeros(3, dtype=np.int64), np.zeros(3, dtype=np.int64))


@pytest.mark.parametrize("seed", range(4))
def test_rows_by_rank_as_a_stable_argsort(seed):
    """``rows_by_rank`` (the potential nodes in snapshot order) against ``rows[argsort(rank[rows],
    kind="stable")]``, equal ranks included (rows outside the order rank 0), and None when any row
    is not live."""
    rng = np.random.default_rng(30 + seed)
    answers = set()
    for _ in range(300):
        cap = int(rng.integers(1, 40))
        rank = rng.integers(0, cap, cap).astype(np.int64)  # repeats: ties keep their order
        live = rng.random(cap) < 0.9
        rows = rng.choice(cap, int(rng.integers(0, cap + 1)), replace=False).astype(np.int64)
        got = _preemption.rows_by_rank(rows, rank, live.view(np.uint8))
        if not live[rows].all():
            assert got is None
            answers.add("dead")
            continue
        assert got.dtype == np.int64 and got.tolist() == rows[np.argsort(rank[rows], kind="stable")].tolist()
        answers.add("sorted")
    assert answers == {"dead", "sorted"}


@pytest.mark.parametrize("seed", range(4))
def test_rows_by_rank_undoes_a_rotation_as_the_stable_argsort(seed):
    """Rows that come in the snapshot's order rotated to a start (the failing cycle's order: the
    kernel's rotation path), with nodes left out, already sorted, or with equal ranks (within a run
    and across the seam, where the stable sort keeps the input order and a rotation would not):
    the same answer as ``rows[argsort(rank[rows], kind="stable")]``."""
    rng = np.random.default_rng(50 + seed)
    kinds = set()
    for _ in range(300):
        cap = int(rng.integers(1, 40))
        ties = rng.random() < 0.3
        rank = (rng.integers(0, max(1, cap // 3), cap) if ties else rng.permutation(cap)).astype(np.int64)
        order = np.argsort(rank, kind="stable").astype(np.int64)
        start = int(rng.integers(0, cap))
        rotated = np.concatenate((order[start:], order[:start]))
        rows = rotated[rng.random(cap) < 0.8] if rng.random() < 0.7 else rotated
        live = np.ones(cap, dtype=np.uint8)
        got = _preemption.rows_by_rank(rows, rank, live)
        want = rows[np.argsort(rank[rows], kind="stable")]
        assert got.tolist() == want.tolist()
        kinds.add("seam tie" if ties and len(rows) > 1 and rank[rows[-1]] == rank[rows[0]] else
                  "sorted" if (np.diff(rank[rows]) >= 0).all() else "rotated")
    assert kinds == {"seam tie", "sorted", "rotated"}


@pytest.mark.parametrize("seed", range(4))
def test_window_fit_as_the_segments_and_fit_verdicts(seed):
    """``window_fit`` against the NumPy form it replaced: nodes without potential victims
    (empty segments) are NO_VICTIMS, the others candidates (active) where ``fit_verdicts`` passes
    them, else FILTERED; without check_fit every node with victims is a candidate."""
    rng = np.random.default_rng(40 + seed)
    cap, width = 30, 4
    for _ in range(200):
        w = int(rng.integers(0, 20))
        alloc = rng.integers(4, 20, (cap, width))
        allowed = rng.integers(1, 9, cap)
        rows = rng.choice(cap, w, replace=False).astype(np.int64)
        used = rng.integers(-2, 12, (w, width))
        count = rng.integers(0, 5, w)
        seg = np.concatenate(([0], np.cumsum(rng.integers(0, 3, w)))).astype(np.int64)
        k = int(rng.integers(0, 4))
        cols = rng.choice(np.array([-1, 0, 1, 2, 3]), k, replace=False).astype(np.int64)
        wants = rng.integers(0, 8, k).astype(np.int64)
        for check_fit in (True, False):
            hp = np.flatnonzero(seg[1:] != seg[:-1])
            ok = np.ones(len(hp), dtype=bool)
            if check_fit:
                _preemption.fit_verdicts(rows[hp], count[hp], allowed, alloc, used[hp], cols, wants, ok.view(np.uint8))
            want_kind = np.full(w, 2, dtype=np.int8)
            want_kind[hp] = np.where(ok, 0, 1)
            kind = np.full(w, 9, dtype=np.int8)
            active = np.full(w, 9, dtype=np.uint8)
            n = _preemption.window_fit(seg, rows, count, allowed, alloc, used, cols, wants, check_fit, kind, active,
                                       0, 1, 2)
            assert kind.tolist() == want_kind.tolist()
            assert active.tolist() == (want_kind == 0).astype(np.uint8).tolist() and n == int((want_kind == 0).sum())


def _steps(rows, row_start, row_count, prio, priority, req, requested, pod_count, nom_rows, nom_vectors, allowed,
           alloc, cols, wants, check_fit, pods, start, volatile, stop_rule):
    """``window_pass``'s reference: the kernels it fuses, called one by one as ``_window`` calls
    them (the nominated pods added through ``add_rows``, no conflict, no PDB)."""
    w, width = len(rows), req.shape[1]
    seg = np.empty(w + 1, dtype=np.int64)
    used = np.empty((w, width), dtype=np.int64)
    count = np.empty(w, dtype=np.int64)
    entries = _preemption.window_usage(rows, row_start, row_count, prio, priority, req, requested, pod_count,
                                       seg, used, count)
    pos_of = np.full(len(requested), -1, dtype=np.int64)
    pos_of[rows] = np.arange(w)
    _preemption.add_rows(used, count, nom_rows, nom_vectors, pos_of)
    kind = np.empty(w, dtype=np.int8)
    active = np.empty(w, dtype=np.uint8)
    _preemption.window_fit(seg, rows, count, allowed, alloc, used, cols, wants, check_fit, kind, active, 0, 1, 2)
    if active.any():
        _preemption.settle_segments(pods, entries, seg, np.flatnonzero(active), start, volatile)
    m = len(entries)
    out = [np.empty(m, dtype=np.int64)] + [np.empty(w, dtype=np.int64) for _ in range(4)] + [np.empty(w)]
    stop = _preemption.select_victims(seg, entries, active, prio, start, req, np.zeros(m, dtype=np.uint8),
                                      np.zeros(m + 1, dtype=np.int64), np.zeros(0, dtype=np.int32),
                                      np.zeros(0, dtype=np.int64), check_fit, cols, wants, rows, alloc, allowed,
                                      used, count, out[0], np.zeros(m, dtype=np.uint8), *out[1:], *stop_rule)
    done = w if stop < 0 else stop + 1
    kind[:done][(active[:done] == 1) & (out[1][:done] == 0)] = 3
    return stop, int((kind == 1).sum()), entries, seg, used, count, kind, np.zeros(w, dtype=np.int8), *out


def test_window_pass_as_the_kernels_it_fuses():
    """``window_pass`` against ``window_usage``, ``add_rows``, ``window_fit``, ``settle_segments``
    and ``select_victims`` called one by one (``_window``'s steps): every output equal, the pool's
    start and volatile columns settled alike, ``pos_of`` left at -1; strided table arrays read by
    their strides; a bad row or a dirty ``pos_of`` raises before anything is written."""
    seen: dict[str, set] = {"stop": set(), "kinds": set()}
    for seed in range(8):
        _window_pass_trials(seed, seen)
    assert seen["stop"] == {True, False} and seen["kinds"] == {0, 1, 2, 3}, seen


def _window_pass_trials(seed: int, seen: dict[str, set]) -> None:
    rng = np.random.default_rng(300 + seed)
    cap, width, pool = 40, 3, 320
    row_count = rng.integers(0, 7, cap)
    row_start = np.zeros(cap, dtype=np.int64)
    row_start[1:] = np.cumsum(row_count)[:-1] + rng.integers(0, 3, cap - 1).cumsum()  # dead gaps
    prio = rng.integers(0, 10, pool)
    start0 = np.where(rng.random(pool) < 0.3, np.inf, rng.integers(0, 9, pool).astype(float))
    volatile0 = ((start0 == np.inf) & (rng.random(pool) < 0.6)).astype(np.uint8)
    pods = np.empty(pool, dtype=object)
    for e in range(pool):
        pods[e] = SimpleNamespace(start_time=float(rng.integers(0, 9)) if rng.random() < 0.5 else None)
    req = rng.integers(0, 60, (pool, width))
    alloc = rng.integers(150, 400, (cap, width))
    requested = np.ascontiguousarray(alloc - rng.integers(0, 20, (cap, width)))  # nearly full
    pod_count = rng.integers(0, 8, cap)
    allowed = rng.integers(2, 10, cap)
    for trial in range(8):
        priority = int(rng.integers(3, 11))
        rows = rng.choice(cap, int(rng.integers(1, 30)), replace=False).astype(np.int64)
        q = int(rng.integers(0, 6))
        nom_rows = rng.choice(cap, q).astype(np.int64)
        nom_vectors = rng.integers(0, 80, (q, width))
        cols = [np.array([0, 2], dtype=np.int64), np.array([1, -1, 2], dtype=np.int64),
                np.zeros(0, dtype=np.int64)][trial % 3]
        wants = rng.integers(10, 80, len(cols))
        check_fit = trial % 4 != 3
        stop_rule = ((1, 0, 0) if trial % 4 == 1 else (2, int(rng.integers(0, 2)), 0)) if trial % 2 else (-1, 0, 0)
        # the table's arrays strided as views of wider ones (the kernel reads them by their strides)
        wide_alloc = np.zeros((cap, 2 * width), dtype=np.int64)
        wide_alloc[:, ::2] = alloc
        wide_nom = np.zeros((q, 2 * width), dtype=np.int64)
        wide_nom[:, ::2] = nom_vectors
        args = (rows, row_start, row_count, prio, priority, req, requested, pod_count)
        s_start, s_volatile = start0.copy(), volatile0.copy()
        want = _steps(*args, nom_rows, nom_vectors, allowed, alloc, cols, wants, check_fit, pods, s_start,
                      s_volatile, stop_rule)
        f_start, f_volatile = start0.copy(), volatile0.copy()
        pos_of = np.full(cap, -1, dtype=np.int64)
        got = _preemption.window_pass(*args, nom_rows, wide_nom[:, ::2], pos_of, allowed, wide_alloc[:, ::2], cols,
                                      wants, check_fit, pods, f_start, f_volatile, *stop_rule, 0, 1, 2, 3)
        assert got[0] == want[0] and got[1] == want[1]
        assert len(got) == len(want) == 14
        for a, b, name in zip(got[2:], want[2:], ("entries", "seg", "used", "count", "kind", "code", "victims",
                                                    "n_victims", "n_violating", "top", "sum", "first")):
            if name == "victims":  # only each node's first n_victims entries are victims
                a = [a[s:s + n] for s, n in zip(got[3][:-1].tolist(), got[9].tolist())]
                b = [b[s:s + n] for s, n in zip(want[3][:-1].tolist(), want[9].tolist())]
                assert [x.tolist() for x in a] == [x.tolist() for x in b]
            else:
                assert np.array_equal(a, b), name
        assert np.array_equal(f_start, s_start) and np.array_equal(f_volatile, s_volatile)
        assert (pos_of == -1).all()
        seen["stop"].add(got[0] >= 0)
        seen["kinds"].update(got[6].tolist())
    rows = np.array([0, cap], dtype=np.int64)
    start, volatile = start0.copy(), volatile0.copy()
    pos_of = np.full(cap, -1, dtype=np.int64)
    empty = np.zeros((0, width), dtype=np.int64)
    with pytest.raises(IndexError):
        _preemption.window_pass(rows, row_start, row_count, prio, 5, req, requested, pod_count, rows[:0], empty,
                                pos_of, allowed, alloc, cols, wants, True, pods, start, volatile, -1, 0, 0, 0, 1, 2, 3)
    pos_of[3] = 0
    with pytest.raises(ValueError):
        _preemption.window_pass(np.array([3], dtype=np.int64), row_start, row_count, prio, 5, req, requested,
                                pod_count, rows[:0], empty, pos_of, allowed, alloc, cols, wants, True, pods, start,
                                volatile, -1, 0, 0, 0, 1, 2, 3)
    assert np.array_equal(start, start0) and np.array_equal(volatile, volatile0)
