"""The dry run's and the diagnosis' kernels take NumPy arrays checked without a buffer acquisition
(``_arrays.vector``/``_arrays.matrix``) and read them through data pointers and strides: the
answers on strided views equal those on contiguous copies, and what a typed memoryview refused
(another dtype, a non-array, a read-only output, rows that are not contiguous where the kernel
needs them) is still refused with an error."""
from __future__ import annotations

import numpy as np
import pytest

from fastsched._kernels import _diagnosis, _preemption


def _padded(a: np.ndarray, extra: int = 3) -> np.ndarray:
    """``a`` (2-d) as a view whose rows are contiguous but ``extra`` elements apart more than
    their length (stride 0 != width), holding garbage in the padding."""
    big = np.full((a.shape[0], a.shape[1] + extra), 10**9, dtype=a.dtype)
    big[:, :a.shape[1]] = a
    view = big[:, :a.shape[1]]
    assert not view.flags.c_contiguous or a.shape[0] <= 1
    return view


def _column_strided(a: np.ndarray) -> np.ndarray:
    """``a`` (2-d) as a view whose columns are 2 elements apart (rows not contiguous)."""
    big = np.full((a.shape[0], 2 * a.shape[1]), 10**9, dtype=a.dtype)
    big[:, ::2] = a
    return big[:, ::2]


def _victims_inputs(seed: int):
    rng = np.random.default_rng(seed)
    cap, width, w, pool = 30, 4, 12, 200
    prio = rng.integers(0, 5, pool)
    start = np.where(rng.random(pool) < 0.3, np.inf, rng.integers(0, 50, pool).astype(float))
    req = rng.integers(0, 40, (pool, width))
    seg = np.zeros(w + 1, dtype=np.int64)
    seg[1:] = np.cumsum(rng.integers(0, 8, w))
    entries = np.sort(rng.choice(pool, int(seg[-1]), replace=False)).astype(np.int64)
    for i in range(w):
        entries[seg[i]:seg[i + 1]].sort()
    m = len(entries)
    n_pdbs = 3
    ids = [rng.choice(n_pdbs, rng.integers(0, 3), replace=False).tolist() for _ in range(m)]
    pdb_ptr = np.zeros(m + 1, dtype=np.int64)
    pdb_ptr[1:] = np.cumsum([len(x) for x in ids])
    pdb_ids = np.array([d for x in ids for d in x], dtype=np.int32)
    pdb_allowed = rng.integers(0, 3, n_pdbs)
    conflict = (rng.random(m) < 0.1).astype(np.uint8)
    active = (rng.random(w) < 0.8).astype(np.uint8)
    rows = rng.choice(cap, w, replace=False).astype(np.int64)
    alloc = rng.integers(100, 200, (cap, width))
    allowed = rng.integers(3, 12, cap)
    used = rng.integers(0, 60, (w, width))
    count = rng.integers(0, 5, w)
    cols = np.array([3, -1, 0, 2], dtype=np.int64)
    wants = rng.integers(0, 90, len(cols))
    wants[1] = 0  # (column -1, a resource no node has: any other want fails every reprieve)
    return dict(seg=seg, entries=entries, active=active, prio=prio, start=start, req=req, conflict=conflict,
                pdb_ptr=pdb_ptr, pdb_ids=pdb_ids, pdb_allowed=pdb_allowed, cols=cols, wants=wants, rows=rows,
                alloc=alloc, allowed=allowed, used=used, count=count, m=m, w=w)


def _select(a: dict, **over) -> list[np.ndarray]:
    a = {**a, **over}
    m, w = a["m"], a["w"]
    out = [np.zeros(m, dtype=np.int64), np.zeros(m, dtype=np.uint8)] + [
        np.zeros(w, dtype=np.int64) for _ in range(4)] + [np.zeros(w, dtype=np.float64)]
    _preemption.select_victims(a["seg"], a["entries"], a["active"], a["prio"], a["start"], a["req"], a["conflict"],
                               a["pdb_ptr"], a["pdb_ids"], a["pdb_allowed"], True, a["cols"], a["wants"], a["rows"],
                               a["alloc"], a["allowed"], a["used"], a["count"], *out)
    return out


@pytest.mark.parametrize("seed", range(3))
def test_select_victims_reads_strided_arrays_by_their_strides(seed):
    """The pool's requests and the base usage as views with padded rows, the allocatable with
    columns 2 apart (a table's columns need not be contiguous): the same victims, counts and
    criteria as on contiguous copies."""
    a = _victims_inputs(seed)
    want = _select(a)
    assert int(want[2].sum()) > 0  # some node has victims
    # the answers depend on every one of these arrays (reading the wrong elements would show)
    for name, changed in (("req", a["req"] * 3), ("used", a["used"] // 2), ("alloc", a["alloc"] // 2)):
        assert not all(np.array_equal(x, y) for x, y in zip(_select(a, **{name: changed}), want)), name
    for over in ({"req": _padded(a["req"])}, {"used": _padded(a["used"])}, {"alloc": _column_strided(a["alloc"])},
                 {"alloc": _padded(a["alloc"]).T.copy().T}):  # (a Fortran-order allocatable)
        got = _select(a, **over)
        for x, y in zip(got, want):
            assert np.array_equal(x, y), over.keys()


def test_select_victims_refuses_what_its_memoryviews_refused():
    a = _victims_inputs(0)
    with pytest.raises(ValueError, match="req"):  # rows not contiguous: the kernel reads them as such
        _select(a, req=_column_strided(a["req"]))
    with pytest.raises(ValueError, match="prio"):
        _select(a, prio=a["prio"].astype(np.int32))
    with pytest.raises(TypeError, match="seg"):
        _select(a, seg=a["seg"].tolist())
    m, w = a["m"], a["w"]
    out = [np.zeros(m, dtype=np.int64), np.zeros(m, dtype=np.uint8)] + [
        np.zeros(w, dtype=np.int64) for _ in range(4)] + [np.zeros(w, dtype=np.float64)]
    out[0].flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        _preemption.select_victims(a["seg"], a["entries"], a["active"], a["prio"], a["start"], a["req"],
                                   a["conflict"], a["pdb_ptr"], a["pdb_ids"], a["pdb_allowed"], True, a["cols"],
                                   a["wants"], a["rows"], a["alloc"], a["allowed"], a["used"], a["count"], *out)
    # per-victim arrays shorter than the segments say (the memoryviews read past them unchecked)
    with pytest.raises(ValueError, match="shorter"):
        _select(a, conflict=a["conflict"][:-1])


@pytest.mark.parametrize("seed", range(3))
def test_window_usage_and_window_fit_read_strided_arrays_by_their_strides(seed):
    rng = np.random.default_rng(70 + seed)
    cap, width, pool, w = 20, 3, 80, 10
    counts = rng.integers(0, 5, cap)
    row_start = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
    row_count = counts.astype(np.int64)
    n_pool = int(counts.sum())
    prio = rng.integers(0, 6, n_pool).astype(np.int64)
    req = rng.integers(0, 9, (n_pool, width)).astype(np.int64)
    requested = rng.integers(20, 60, (cap, width)).astype(np.int64)
    pod_count = (row_count + rng.integers(0, 3, cap)).astype(np.int64)
    rows = rng.choice(cap, w, replace=False).astype(np.int64)

    def usage(req_, requested_, padded_out):
        seg = np.empty(w + 1, dtype=np.int64)
        used = np.empty((w, width), dtype=np.int64)
        used_arg = _padded(used) if padded_out else used
        count = np.empty(w, dtype=np.int64)
        entries = _preemption.window_usage(rows, row_start, row_count, prio, 3, req_, requested_, pod_count, seg,
                                           used_arg, count)
        return entries, seg, np.ascontiguousarray(used_arg), count

    want = usage(req, requested, False)
    assert n_pool > 0 and len(want[0]) > 0
    for got in (usage(_padded(req), requested, False), usage(req, _column_strided(requested), False),
                usage(req, requested, True)):
        for x, y in zip(got, want):
            assert np.array_equal(x, y)
    with pytest.raises(ValueError, match="req"):
        usage(_column_strided(req), requested, False)

    _, seg, used, count = want
    alloc = rng.integers(50, 90, (cap, width)).astype(np.int64)
    allowed = rng.integers(4, 10, cap).astype(np.int64)
    cols = np.array([2, -1, 0], dtype=np.int64)
    # column 2's want at its median free amount (some nodes fit, some do not); column -1 (a
    # resource no node has) wants 0, else every node fails
    wants = np.array([int(np.median(alloc[rows, 2] - used[:, 2])), 0, 1], dtype=np.int64)

    def fit(alloc_, used_):
        kind = np.empty(w, dtype=np.int8)
        active = np.empty(w, dtype=np.uint8)
        n = _preemption.window_fit(seg, rows, count, allowed, alloc_, used_, cols, wants, True, kind, active, 0, 1, 2)
        return n, kind.tolist(), active.tolist()

    want_fit = fit(alloc, used)
    assert set(want_fit[1]) >= {0, 1}  # nodes that fit and nodes that do not
    assert fit(_column_strided(alloc), used) == want_fit
    assert fit(alloc, _column_strided(used)) == want_fit
    assert fit(_padded(alloc), _padded(used)) == want_fit


def test_merge_fit_reads_padded_rows_by_their_stride():
    """The table's allocatable and requested columns as views with padded rows (a table grown in
    place keeps its column count but not necessarily its row stride): the same statuses."""
    rng = np.random.default_rng(5)
    C, R, n = 40, 3, 30
    rows = rng.permutation(C)[:n].astype(np.int64)
    first = np.full(C, -1, np.int16)
    scode = np.zeros(C, np.int8)
    srid = np.full(C, -1, np.int32)
    alloc = rng.integers(0, 8, (C, R)).astype(np.int64)
    requested = np.minimum(rng.integers(0, 8, (C, R)), alloc).astype(np.int64)
    allowed = rng.integers(1, 4, C).astype(np.int64)
    pod_count = rng.integers(0, 4, C).astype(np.int64)
    cols = np.array([0, 2, -1], dtype=np.int64)
    wants = np.array([3, 2, 0], dtype=np.int64)
    counted = np.zeros(C, np.uint8)  # (every row left for the caller: no early stop)

    def run(alloc_, requested_):
        pid, code, rid = np.empty(n, np.int16), np.empty(n, np.int8), np.empty(n, np.int32)
        patterns = np.empty(_diagnosis.MAX_PATTERNS, np.int64)
        got = _diagnosis.merge_fit(rows, first, scode, srid, 0, pod_count, allowed, alloc_, requested_, cols, wants,
                                   2, 3, 4, counted, pid, code, rid, patterns)
        return got, pid.tolist(), code.tolist(), rid.tolist(), patterns[:max(got, 0)].tolist()

    want = run(alloc, requested)
    assert want[0] >= 2  # several failure patterns
    assert run(_padded(alloc), _padded(requested)) == want
    with pytest.raises(ValueError, match="alloc"):
        run(_column_strided(alloc), requested)
    with pytest.raises(ValueError, match="counted"):
        pid, code, rid = np.empty(n, np.int16), np.empty(n, np.int8), np.empty(n, np.int32)
        _diagnosis.merge_fit(rows, first, scode, srid, 0, pod_count, allowed, alloc, requested, cols, wants, 2, 3,
                             4, counted.astype(np.int64), pid, code, rid, np.empty(_diagnosis.MAX_PATTERNS, np.int64))


def test_pick_candidate_and_stale_rows_read_strided_views():
    rng = np.random.default_rng(9)
    n = 40
    crit = [rng.integers(0, 3, n), rng.integers(0, 3, n), rng.integers(0, 3, n), rng.integers(1, 3, n)]
    first = rng.integers(0, 3, n).astype(np.float64)
    want = _preemption.pick_candidate(*crit, first)
    strided = [np.repeat(c, 2)[::2] for c in crit] + [np.repeat(first, 2)[::2]]
    assert not strided[0].flags.c_contiguous
    assert _preemption.pick_candidate(*strided) == want
    # a best candidate that is not the first, so that reading the wrong elements shows
    crit[0][:] = 1
    crit[0][17] = 0
    assert _preemption.pick_candidate(*[np.repeat(c, 2)[::2] for c in crit], np.repeat(first, 2)[::2]) == 17

    have = rng.integers(0, 3, 50).astype(np.int64)
    want_v = rng.integers(0, 3, 50).astype(np.int64)
    rows = rng.permutation(50)[:30].astype(np.int64)
    expected = rows[have[rows] != want_v[rows]]
    got = _preemption.stale_rows(rows, np.repeat(have, 3)[::3], np.repeat(want_v, 2)[::2])
    assert got.tolist() == expected.tolist() and 0 < len(expected) < len(rows)


def test_add_rows_writes_padded_rows_by_their_stride():
    """The nominated usage summed into an output whose rows are padded (a shadow table's requested
    columns as a view): the same sums as into a contiguous one, the padding untouched."""
    rng = np.random.default_rng(11)
    cap, width, q = 20, 3, 60
    rows = rng.integers(0, cap, q)
    vectors = rng.integers(0, 50, (q, width))
    want, want_counts = np.zeros((cap, width), dtype=np.int64), np.zeros(cap, dtype=np.int64)
    _preemption.add_rows(want, want_counts, rows, vectors)
    out = _padded(np.zeros((cap, width), dtype=np.int64))
    counts = np.zeros(cap, dtype=np.int64)
    assert _preemption.add_rows(out, counts, rows, vectors) == q
    assert np.array_equal(out, want) and np.array_equal(counts, want_counts)
    assert (out.base[:, width:] == 10**9).all()
    with pytest.raises(ValueError, match="out"):
        _preemption.add_rows(_column_strided(np.zeros((cap, width), dtype=np.int64)), counts, rows, vectors)


def test_settle_segments_checks_the_entries_it_reads():
    """The pool's Pod objects are read through the object array's data pointer: an entry or a
    segment outside the arrays is an IndexError (the memoryview read past them unchecked), and
    the pods must be an object array."""
    from types import SimpleNamespace

    pods = np.empty(3, dtype=object)
    for e in range(3):
        pods[e] = SimpleNamespace(start_time=float(e))
    start = np.full(3, np.inf)
    volatile = np.ones(3, dtype=np.uint8)
    seg = np.array([0, 3], dtype=np.int64)
    nodes = np.zeros(1, dtype=np.int64)
    assert _preemption.settle_segments(pods, np.array([2, 0, 1], dtype=np.int64), seg, nodes, start, volatile) == 3
    assert start.tolist() == [0.0, 1.0, 2.0] and volatile.tolist() == [0, 0, 0]
    with pytest.raises(IndexError, match="entry 3"):
        _preemption.settle_segments(pods, np.array([0, 1, 3], dtype=np.int64), seg, nodes, np.full(3, np.inf),
                                    np.ones(3, dtype=np.uint8))
    with pytest.raises(IndexError, match="segment"):
        _preemption.settle_segments(pods, np.array([0, 1], dtype=np.int64), seg, nodes, np.full(3, np.inf),
                                    np.ones(3, dtype=np.uint8))
    with pytest.raises(ValueError, match="pods"):
        _preemption.settle_segments(np.zeros(3), np.array([0, 1, 2], dtype=np.int64), seg, nodes,
                                    np.full(3, np.inf), np.ones(3, dtype=np.uint8))
