"""A failing cycle's plugin sets and the potential nodes' rows in one compiled pass
(``_diagnosis.plugin_sets``, ``_diagnosis.rows_with_code``) against the NumPy forms they replace."""
import numpy as np
import pytest

from fastsched._kernels import _diagnosis
from fastsched.framework.status import Code
from fastsched.runtime.filter_results import ArrayNodeToStatus, FilterResults
from fastsched.snapshot import NodeTable
from fastsched.snapshot.snapshot import NodeBatch
from fastsched.testing import make_node

_PENDING = int(Code.PENDING)
_CODES = [int(c) for c in (Code.SUCCESS, Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING)]


def _numpy_sets(res: FilterResults, positions) -> tuple[set, set]:
    """The sets as schedule_one built them before: the codes' gather, the Pending test, each
    part's plugin ids through ``unschedulable_plugins``."""
    pos = np.arange(len(res), dtype=np.int64) if positions is None else positions
    pending_at = res.codes[pos] == _PENDING
    return res.unschedulable_plugins(pos[~pending_at]), res.unschedulable_plugins(pos[pending_at])


def _random_results(rng, n: int) -> FilterResults:
    res = FilterResults(n, ["A", "B", "C", "D"])
    res.codes[:] = rng.choice(_CODES, n)
    res.plugin_ids[:] = np.where(res.codes != 0, rng.integers(0, 4, n), -1)
    return res


@pytest.mark.parametrize("seed", range(6))
def test_rejecting_plugins_as_numpy(seed):
    """Random verdicts (feasible nodes, Pending and other rejections by the same plugins), every
    position or repeated and unordered ones: the same two sets; positions of another dtype take
    the NumPy form and agree; a position out of range raises as NumPy's gather does."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 80))
    res = _random_results(rng, n)
    seen_pending = False
    for positions in (None, rng.integers(0, n, int(rng.integers(0, 2 * n))).astype(np.int64),
                      np.flatnonzero(res.codes != 0), np.zeros(0, dtype=np.int64)):
        want = _numpy_sets(res, positions)
        assert res.rejecting_plugins(positions, _PENDING) == want
        seen_pending |= bool(want[1])
        if positions is not None:
            assert res.rejecting_plugins(positions.astype(np.int32), _PENDING) == want
    assert seen_pending or not (res.codes == _PENDING).any()
    with pytest.raises(IndexError):
        res.rejecting_plugins(np.array([n], dtype=np.int64), _PENDING)


def test_plugin_sets_keeps_a_plugin_in_both_sets_and_refuses_what_it_cannot_count():
    ids = np.array([0, -1, 2, 2, 1], dtype=np.int16)
    codes = np.array([_PENDING, 0, 2, _PENDING, 2], dtype=np.int8)
    assert _diagnosis.plugin_sets(ids, codes, None, 3, _PENDING) == ([1, 2], [0, 2])
    assert _diagnosis.plugin_sets(ids, codes, np.array([4, 4, 1], dtype=np.int64), 3, _PENDING) == ([1], [])
    assert _diagnosis.plugin_sets(ids, codes, None, 2, _PENDING) is None  # an id past the plugins
    assert _diagnosis.plugin_sets(ids, codes, np.array([5], dtype=np.int64), 3, _PENDING) is None
    assert _diagnosis.plugin_sets(ids, codes, np.array([-1], dtype=np.int64), 3, _PENDING) is None
    with pytest.raises(ValueError):
        _diagnosis.plugin_sets(ids, codes[:4], None, 3, _PENDING)


@pytest.mark.parametrize("seed", range(6))
def test_rows_for_status_code_as_numpy(seed):
    """The potential nodes' rows (``rows_for_status_code``) against the codes' gather, test and
    the rows' gather, for every code, over repeated and unordered positions; a position out of
    range raises as before."""
    rng = np.random.default_rng(seed)
    table = NodeTable()
    n = int(rng.integers(1, 40))
    table.add_nodes([make_node(f"n{i}") for i in range(n)])
    rows = rng.permutation(n).astype(np.int64)
    res = _random_results(rng, n)
    for positions in (rng.integers(0, n, int(rng.integers(0, 2 * n))).astype(np.int64), np.flatnonzero(res.codes),
                      np.zeros(0, dtype=np.int64)):
        nts = ArrayNodeToStatus(res, NodeBatch(table, rows), positions)
        for code in (Code.UNSCHEDULABLE, Code.PENDING):  # (not the absent nodes' code: None then)
            got = nts.rows_for_status_code(code)
            assert got is not None and got[0] is table
            assert got[1].tolist() == rows[positions[res.codes[positions] == int(code)]].tolist()
    nts = ArrayNodeToStatus(res, NodeBatch(table, rows), np.array([n], dtype=np.int64))
    with pytest.raises(IndexError):
        nts.rows_for_status_code(Code.UNSCHEDULABLE)
    assert _diagnosis.rows_with_code(rows, res.codes, np.array([-1], dtype=np.int64), 2) is None
