"""The runtime's vectorized path: vectorized plugins, per-node plugins mixed in, identical results."""
import numpy as np
import pytest

from fastsched.config.types import KubeSchedulerProfile, Plugin, Plugins, PluginSet
from fastsched.framework import Code, CycleState, Status
from fastsched.framework.vectorized import (VectorizedFilterPlugin, VectorizedScoreExtensions, VectorizedScorePlugin,
                                       FilterVerdicts)
from fastsched.runtime import Registry, new_framework
from fastsched.testing import make_pod, random_snapshot

from .fakes import QueueSortAndBind


class CpuFloor(VectorizedFilterPlugin, VectorizedScorePlugin, VectorizedScoreExtensions):
    """Rejects nodes with less than 2 cpus (Unresolvable) or an odd row (Unschedulable, two reasons);
    scores the allocatable cpu in cores, normalized to the max."""

    def __init__(self, error_rows=()):
        self.error_rows = set(error_rows)

    def name(self):
        return "CpuFloor"

    def _cpu(self, node_info):
        return node_info.allocatable.milli_cpu

    def filter(self, state, pod, node_info):
        row = node_info.row
        if row in self.error_rows:
            return Status(Code.ERROR, f"bad row {row}")
        if self._cpu(node_info) < 2000:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "too small")
        if row % 2:
            return Status(Code.UNSCHEDULABLE, "odd", "row")
        return None

    def filter_vectorized(self, state, pod, nodes):
        t, rows = nodes.table, nodes.rows
        cpu = t.alloc[rows, t.resource_index["cpu"]]
        codes = np.zeros(len(rows), dtype=np.int8)
        rid = np.full(len(rows), -1, dtype=np.int32)
        odd = rows % 2 == 1
        codes[odd], rid[odd] = Code.UNSCHEDULABLE, 1
        small = cpu < 2000
        codes[small], rid[small] = Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 0
        reasons = [("too small",), ("odd", "row")]
        for r in self.error_rows:
            hit = rows == r
            codes[hit] = Code.ERROR
            rid[hit] = len(reasons)
            reasons.append((f"bad row {r}",))
        return FilterVerdicts(codes, rid, reasons)

    def score(self, state, pod, node_info):
        return self._cpu(node_info) // 1000, None

    def score_vectorized(self, state, pod, nodes):
        t = nodes.table
        return t.alloc[nodes.rows, t.resource_index["cpu"]] // 1000, None

    def score_extensions(self):
        return self

    def normalize_score(self, state, pod, scores):
        m = max((s.score for s in scores), default=0)
        for s in scores:
            s.score = 0 if m == 0 else 100 * s.score // m

    def normalize_score_vectorized(self, state, pod, scores, nodes):
        m = scores.max(initial=0)
        scores[:] = 0 if m == 0 else 100 * scores // m


class NameFilter:
    """A per-node-only plugin (duck-typed): rejects nodes whose name ends in 3, scores name length."""

    def name(self):
        return "NameFilter"

    def filter(self, state, pod, node_info):
        if node_info.name.endswith("3"):
            return Status(Code.UNSCHEDULABLE, "ends in 3")
        return None

    def score(self, state, pod, node_info):
        return int(node_info.name[-1]), None

    def score_extensions(self):
        return None


def build(cpu_floor=None):
    r = Registry({"CpuFloor": lambda a, h: cpu_floor or CpuFloor(), "NameFilter": lambda a, h: NameFilter(),
                  "QSB": lambda a, h: QueueSortAndBind()})
    plugins = Plugins(queue_sort=PluginSet([Plugin("QSB")]), bind=PluginSet([Plugin("QSB")]),
                      filter=PluginSet([Plugin("NameFilter"), Plugin("CpuFloor")]),
                      score=PluginSet([Plugin("CpuFloor", 2), Plugin("NameFilter", 1)]))
    return new_framework(r, KubeSchedulerProfile("s", plugins=plugins))


@pytest.mark.parametrize("seed", range(4))
def test_mixed_filters_match_per_node(seed):
    snap = random_snapshot(seed, 150, 0)
    fw = build()
    pod = make_pod("p")
    batch = snap.batch()
    res = fw.run_filter_plugins_vectorized(CycleState(), pod, batch)
    codes = set()
    for i, view in enumerate(batch):
        want = fw.run_filter_plugins(CycleState(), pod, view)
        got = res.status(i)
        assert (got is None) == (want is None)
        if want is not None:
            assert (got.code(), got.reasons(), got.plugin()) == (want.code(), want.reasons(), want.plugin())
            codes.add((want.code(), want.plugin()))
    assert {(Code.UNSCHEDULABLE, "NameFilter"), (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "CpuFloor"),
            (Code.UNSCHEDULABLE, "CpuFloor")} <= codes
    assert res.feasible().sum() > 0
    counts = res.reason_counts()
    assert counts["odd"] == counts["row"] > 0


def test_batch_errors_are_wrapped_like_per_node():
    snap = random_snapshot(1, 40, 0)
    fw = build(CpuFloor(error_rows=[2, 4]))
    pod = make_pod("p")
    batch = snap.batch()
    res = fw.run_filter_plugins_vectorized(CycleState(), pod, batch)
    pos = [i for i, r in enumerate(batch.rows.tolist()) if r == 4][0]
    st = res.status(pos)
    want = fw.run_filter_plugins(CycleState(), pod, batch[pos])
    assert st.code() == Code.ERROR == want.code()
    assert st.message() == want.message() == 'running "CpuFloor" filter plugin: bad row 4'
    assert res.first_error() in {i for i, r in enumerate(batch.rows.tolist()) if r in (2, 4)}


def test_filter_batch_exception_fails_every_node():
    class Exploding(CpuFloor):
        def filter_vectorized(self, state, pod, nodes):
            raise ZeroDivisionError("oops")

    snap = random_snapshot(2, 10, 0)
    fw = build(Exploding())
    res = fw.run_filter_plugins_vectorized(CycleState(), make_pod("p"), snap.batch())
    checked = [res.status(i) for i in range(len(res)) if res.plugin_ids[i] >= 0
               and res.plugin_names[res.plugin_ids[i]] == "CpuFloor"]
    assert checked and all(s.code() == Code.ERROR for s in checked)
    assert checked[0].message() == 'running "CpuFloor" filter plugin: ZeroDivisionError: oops'


def test_skipped_filter_plugins_are_skipped_in_batch():
    snap = random_snapshot(3, 30, 0)
    fw = build()
    state = CycleState()
    state.set_skip_filter_plugins({"CpuFloor", "NameFilter"})
    res = fw.run_filter_plugins_vectorized(state, make_pod("p"), snap.batch())
    assert res.feasible().all()


def test_scores_batch_equal_per_node():
    snap = random_snapshot(5, 120, 0)
    fw = build()
    pod = make_pod("p")
    batch = snap.batch()
    m1, s1 = fw.run_score_plugins_matrix(CycleState(), pod, batch)
    m2, s2 = fw.run_score_plugins_matrix(CycleState(), pod, list(batch))
    assert s1 is None and s2 is None
    for what in ("raw", "normalized", "weighted", "totals"):
        np.testing.assert_array_equal(getattr(m1, what), getattr(m2, what))
    assert m1.normalized[0].max() == 100


def test_score_batch_wrong_shape_is_an_error():
    class Bad(CpuFloor):
        def score_vectorized(self, state, pod, nodes):
            return np.zeros(3, dtype=np.int64), None

    snap = random_snapshot(5, 20, 0)
    fw = build(Bad())
    m, st = fw.run_score_plugins_matrix(CycleState(), make_pod("p"), snap.batch())
    assert m is None and st.code() == Code.ERROR
    assert st.message() == ('running Score plugins: plugin "CpuFloor" failed with: plugin "CpuFloor" returned '
                            '(ndarray(shape=(3,), dtype=int64), None) from Score (score_vectorized): expected an '
                            '(integer ndarray of shape (20,), Status or None) pair')


class OldNames(CpuFloor):
    """A plugin written before the vectorized protocol was renamed: filter_batch / score_batch."""

    filter_vectorized = None
    score_vectorized = None
    calls: list

    def __init__(self):
        super().__init__()
        self.calls = []

    def filter_batch(self, state, pod, nodes):
        self.calls.append("filter_batch")
        return CpuFloor.filter_vectorized(self, state, pod, nodes)

    def score_batch(self, state, pod, nodes):
        self.calls.append("score_batch")
        return CpuFloor.score_vectorized(self, state, pod, nodes)


def test_pre_rename_method_names_still_run_vectorized_with_a_deprecation_warning():
    snap = random_snapshot(2, 60, 0)
    old = OldNames()
    with pytest.warns(DeprecationWarning) as caught:
        fw = build(old)
    assert sorted(str(w.message).split(" (")[0] for w in caught) == [
        "OldNames.filter_batch is deprecated: name it filter_vectorized",
        "OldNames.score_batch is deprecated: name it score_vectorized"]
    pod = make_pod("p")
    batch = snap.batch()
    res = fw.run_filter_plugins_vectorized(CycleState(), pod, batch)
    want = build().run_filter_plugins_vectorized(CycleState(), pod, batch)
    assert res.codes.tolist() == want.codes.tolist()
    m, _ = fw.run_score_plugins_matrix(CycleState(), pod, batch)
    assert m.totals.tolist() == build().run_score_plugins_matrix(CycleState(), pod, batch)[0].totals.tolist()
    assert old.calls == ["filter_batch", "score_batch"]
