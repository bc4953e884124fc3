"""ArrayNodeToStatus keeps NodeToStatus' contract (framework/types.py) over FilterResults' arrays."""
from __future__ import annotations

import numpy as np

from fastsched.framework.status import Code, Status
from fastsched.framework.types import NodeToStatus
from fastsched.framework.vectorized import FilterVerdicts
from fastsched.runtime.filter_results import ArrayNodeToStatus, FilterResults
from fastsched.snapshot import build_snapshot
from fastsched.testing import make_node

UNSCHED = Status(Code.UNSCHEDULABLE, "too small")
UNRESOLVABLE = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "wrong zone")


def _results(statuses):
    res = FilterResults(len(statuses), ["P"])
    res.record(0, "P", np.arange(len(statuses), dtype=np.int64), FilterVerdicts.from_statuses(statuses))
    return res


def _map(names_or_batch, statuses, absent=None):
    res = _results(statuses)
    return ArrayNodeToStatus(res, names_or_batch, np.flatnonzero(~res.feasible()), absent=absent)


def _visited(m):
    seen = []
    m.for_each_explicit_node(lambda name, s: seen.append((name, s.code(), tuple(s.reasons()))))
    return seen


def test_for_each_explicit_node_visits_the_array_entries_and_the_set_ones():
    names = ["a", "b", "c", "d"]
    m = _map(names, [UNSCHED, None, UNRESOLVABLE, UNSCHED])
    assert _visited(m) == [("a", Code.UNSCHEDULABLE, ("too small",)),
                           ("c", Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("wrong zone",)),
                           ("d", Code.UNSCHEDULABLE, ("too small",))]
    # a status set by name overrides its array entry, and a new one is added (as NodeToStatus.set)
    m.set("c", Status(Code.UNSCHEDULABLE, "extender says no"))
    m.set("b", Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "extender"))
    seen = _visited(m)
    assert sorted(n for n, _, _ in seen) == ["a", "b", "c", "d"] and len(seen) == m.len() == 4
    assert dict((n, (c, r)) for n, c, r in seen) == {n: (s.code(), tuple(s.reasons())) for n, s in m.items()}
    assert dict((n, c) for n, c, _ in seen)["c"] == Code.UNSCHEDULABLE


def test_for_each_explicit_node_matches_a_plain_node_to_status():
    names = ["a", "b", "c"]
    statuses = [UNSCHED, UNRESOLVABLE, None]
    m = _map(names, statuses)
    plain = NodeToStatus({n: s for n, s in zip(names, statuses) if s is not None})
    assert [(n, c) for n, c, _ in _visited(m)] == [(n, c) for n, c, _ in _visited(plain)]


def test_rows_for_status_code():
    snap = build_snapshot([make_node(f"n{i}") for i in range(5)])
    batch = snap.batch()
    sub = batch.select(np.array([4, 1, 3, 0]))
    m = _map(sub, [UNSCHED, UNRESOLVABLE, None, UNSCHED])
    table, rows = m.rows_for_status_code(Code.UNSCHEDULABLE)
    assert table is batch.table
    assert table.node_names[rows].tolist() == ["n4", "n0"] == m.nodes_for_status_code([], Code.UNSCHEDULABLE)
    # the answer would not be complete: None (callers use nodes_for_status_code); absent nodes
    # are UnschedulableAndUnresolvable by default
    assert m.rows_for_status_code(Code.UNSCHEDULABLE_AND_UNRESOLVABLE) is None
    other = _map(sub, [UNSCHED, UNRESOLVABLE, None, UNSCHED], absent=Status(Code.UNSCHEDULABLE))
    assert table.node_names[other.rows_for_status_code(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)[1]].tolist() == ["n1"]
    assert _map(sub, [UNSCHED] * 4, absent=Status(Code.UNSCHEDULABLE)).rows_for_status_code(Code.UNSCHEDULABLE) is None
    assert _map(["a", "b"], [UNSCHED, None]).rows_for_status_code(Code.UNSCHEDULABLE) is None
    m.set("n3", UNSCHED)
    assert m.rows_for_status_code(Code.UNSCHEDULABLE) is None


def test_filter_verdicts_from_statuses_skips_only_passing_nodes():
    """``FilterVerdicts.from_statuses`` finds the failing positions in C: each failing node keeps
    its code and its reasons' shared index, a Success status and None both pass."""
    a, b = Status(Code.UNSCHEDULABLE, "x"), Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "y", "z")
    v = FilterVerdicts.from_statuses([None, a, Status(Code.SUCCESS), b, None, Status(Code.UNSCHEDULABLE, "x")])
    assert v.codes.tolist() == [0, int(Code.UNSCHEDULABLE), 0, int(Code.UNSCHEDULABLE_AND_UNRESOLVABLE), 0,
                                int(Code.UNSCHEDULABLE)]
    assert v.reason_ids.tolist() == [-1, 0, -1, 1, -1, 0]
    assert v.reasons == [("x",), ("y", "z")]
