"""FilterResults.reason_counts' compiled pass (``_diagnosis.id_counts``) against its NumPy form."""
from collections import Counter

import numpy as np
import pytest

from fastsched._kernels import _diagnosis
from fastsched.runtime.filter_results import FilterResults


def _numpy_counts(res: FilterResults, positions) -> Counter:
    """The histogram as the NumPy form computes it (gather, drop feasible, bincount)."""
    rids = res.reason_ids if positions is None else res.reason_ids[positions]
    counts: Counter = Counter()
    for k in np.flatnonzero(np.bincount(rids[rids >= 0], minlength=len(res.reasons))).tolist():
        for reason in res.reasons[k]:
            counts[reason] += int(np.count_nonzero(rids == k))
    return counts


@pytest.mark.parametrize("seed", range(5))
def test_reason_counts_as_numpy(seed):
    """Random reason ids (feasible nodes among them, reasons sharing strings, repeated and
    unordered positions): the same counts in the same key order as the NumPy form; a position out
    of range still raises as NumPy's gather does."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    res = FilterResults(n, ["A", "B"])
    res.reasons = [("Insufficient cpu",), ("Insufficient cpu", "Insufficient memory"), ("Too many pods",),
                   ("node(s) had untolerated taint",)]
    res.reason_ids[:] = rng.integers(-1, len(res.reasons), n)
    for positions in (None, rng.integers(0, n, int(rng.integers(0, 2 * n))).astype(np.int64),
                      np.flatnonzero(res.reason_ids >= 0), np.zeros(0, dtype=np.int64)):
        want = _numpy_counts(res, positions)
        got = res.reason_counts(positions)
        assert got == want and list(got) == list(want)
        # the NumPy path (positions of another dtype) agrees too
        if positions is not None:
            assert res.reason_counts(positions.astype(np.int32)) == want
    with pytest.raises(IndexError):
        res.reason_counts(np.array([n], dtype=np.int64))


def test_id_counts_refuses_what_it_cannot_count():
    ids = np.array([0, -1, 2, 2, 1], dtype=np.int32)
    assert _diagnosis.id_counts(ids, None, 3) == [(0, 1), (1, 1), (2, 2)]
    assert _diagnosis.id_counts(ids, np.array([3, 2, 1, 3], dtype=np.int64), 3) == [(2, 3)]
    assert _diagnosis.id_counts(ids, None, 2) is None  # an id past the reasons
    assert _diagnosis.id_counts(ids, np.array([5], dtype=np.int64), 3) is None
    assert _diagnosis.id_counts(ids, np.array([-1], dtype=np.int64), 3) is None
