"""Opportunistic batching's state (``fastsched.runtime.batch``): upstream's
``framework/runtime/batch_test.go`` transcribed (TestBatchBasic, TestBatchRescore,
TestBatchRescoreChain, with the same test plugins: the filter that keeps two pods whose UIDs start
with ``b`` apart, the configurable Filter and the configurable Score plugin whose NormalizeScore
checks it only sees nodes PreScore saw), and the heap (``sorted_nodes.go``) against Go's
``container/heap``.
"""
from __future__ import annotations

import pytest

from fastsched.config.types import KubeSchedulerProfile, Plugin, PluginSet, Plugins
from fastsched.framework.cycle_state import CycleState, NotFoundError
from fastsched.framework.status import Code, Status
from fastsched.plugins.registry import in_tree_registry
from fastsched.runtime import new_framework
from fastsched.runtime.batch import (MAX_BATCH_AGE, OpportunisticBatch, ScoredNode, SortedScoredNodes)
from fastsched.snapshot import build_snapshot
from fastsched.testing import make_node, make_pod

PRE_SCORE_KEY = "configurableScorePlugin/preScoreSeenNodes"


def blocking(suffix: str) -> str:
    return f"b-{suffix}"


def non_blocking(suffix: str) -> str:
    return f"a-{suffix}"


class BatchTestPlugin:
    """A pod whose UID starts with 'b' does not fit a node that has another such pod."""

    def name(self):
        return "batchTest"

    def filter(self, state, pod, node_info):
        if pod.uid.startswith("b") and any(pi.pod.uid.startswith("b") for pi in node_info.pods):
            return Status(Code.UNSCHEDULABLE, "unsched")
        return None


class ConfigurableFilter:
    def __init__(self, filter_err=False):
        self.filter_err = filter_err

    def name(self):
        return "configurableFilter"

    def filter(self, state, pod, node_info):
        return Status(Code.ERROR, "injected filter error") if self.filter_err else None


class _Seen(set):
    def clone(self):
        return _Seen(self)


class ConfigurableScore:
    def __init__(self, score=0, pre_score_err=False, score_err=False, norm_err=False):
        self.value, self.pre_score_err, self.score_err, self.norm_err = score, pre_score_err, score_err, norm_err

    def name(self):
        return "configurableScore"

    def pre_score(self, state, pod, nodes):
        if self.pre_score_err:
            return Status(Code.ERROR, "injected prescore error")
        state.write(PRE_SCORE_KEY, _Seen(n.node().name for n in nodes))
        return None

    def score(self, state, pod, node_info):
        if self.score_err:
            return 0, Status(Code.ERROR, "injected score error")
        return self.value, None

    def score_extensions(self):
        return self

    def normalize_score(self, state, pod, scores):
        if self.norm_err:
            return Status(Code.ERROR, "injected normalize error")
        try:
            seen = state.read(PRE_SCORE_KEY)
        except NotFoundError as e:
            return Status(Code.ERROR, f"NormalizeScore: missing PreScore state: {e}")
        for s in scores:
            if s.name not in seen:
                return Status(Code.ERROR, f"NormalizeScore called for node {s.name!r} which was not passed to PreScore")
        return None


def batch_framework(score=None, flt=None):
    registry = in_tree_registry()
    plugins = {"batchTest": BatchTestPlugin()}
    filters = [Plugin("batchTest")]
    pre_score, scores = [], []
    if flt is not None:
        plugins["configurableFilter"] = flt
        filters.append(Plugin("configurableFilter"))
    if score is not None:
        plugins["configurableScore"] = score
        pre_score, scores = [Plugin("configurableScore")], [Plugin("configurableScore", 1)]
    for name, pl in plugins.items():
        registry.register(name, lambda args, handle, pl=pl: pl)
    p = Plugins(queue_sort=PluginSet(enabled=[Plugin("PrioritySort")]),
                bind=PluginSet(enabled=[Plugin("DefaultBinder")]), filter=PluginSet(enabled=filters),
                pre_score=PluginSet(enabled=pre_score), score=PluginSet(enabled=scores))
    return new_framework(registry, KubeSchedulerProfile(scheduler_name="default-scheduler", plugins=p))


def nodes_heap(names):
    """batch_test.go's testSortedScoredNodes: pops in the given order (no scores, equal totals,
    so the ported heap keeps the order only for one or two nodes: the tests use at most two)."""
    return SortedScoredNodes([ScoredNode(n) for n in names])


def snapshot(nodes, pods=()):
    return build_snapshot([make_node(n) for n in nodes], list(pods))


# ------------------------------------------------------------------------------------------------
# TestBatchBasic
# ------------------------------------------------------------------------------------------------
BASIC = [
    # name, first pod id, first sig, first scheduled, first chosen, first others, same cycle, skip pod,
    # second pod id, second nominated node, second sig, second chosen, generic workload, hint, remaining
    ("a second pod with the same signature gets a hint",
     blocking("1"), "sig", True, "n3", ["n1"], False, False, blocking("2"), "", "sig", "n1", False, "n1", None),
    ("a second pod with a different signature doesn't get a hint",
     non_blocking("1"), "sig", True, "n3", ["n1"], False, False, non_blocking("2"), "", "sig2", "n1", False, "", None),
    ("pod doesn't get hint if previous pod didn't scheduled",
     blocking("1"), "sig", False, "n3", ["n1"], False, False, blocking("2"), "", "sig", "n1", False, "", None),
    ("empty list",
     blocking("1"), "sig", True, "n3", [], False, False, blocking("2"), "", "sig", "n4", False, "", None),
    ("nil list",
     blocking("1"), "sig", True, "n3", None, False, False, blocking("2"), "", "sig", "n4", False, "", None),
    ("pod doesn't get hint because the previous pod is to a different profile",
     blocking("1"), "sig", True, "n3", ["n1"], False, True, blocking("2"), "", "sig", "n1", False, "", None),
    ("pod doesn't use batch from preceding pod when they are from the same cycle state, but GenericWorkload is disabled",
     blocking("1"), "sig", True, "n3", ["n1"], True, False, blocking("2"), "", "sig", "n1", False, "", None),
    ("pod uses batch from preceding pod when they are from the same cycle state and GenericWorkload is enabled",
     blocking("1"), "sig", True, "n3", ["n1"], True, False, blocking("2"), "", "sig", "n1", True, "n1", None),
    ("pod uses batch from preceding pod and leaves remaining batch to next pod",
     blocking("1"), "sig", True, "n3", ["n1", "n2"], False, False, blocking("2"), "", "sig", "n1", False, "n1",
     ("sig", ["n2"])),
    ("a second pod with a nominated node does not get a hint",
     blocking("1"), "sig", True, "n3", ["n1"], False, False, blocking("2"), "n1", "sig", "n1", False, "", None),
]


@pytest.mark.parametrize("case", BASIC, ids=lambda c: c[0])
def test_batch_basic(case):
    (_, first_id, first_sig, first_ok, first_chosen, first_others, same_cycle, skip_pod,
     second_id, second_nnn, second_sig, second_chosen, generic_workload, expected_hint, expected_state) = case
    fw = batch_framework()
    batch = OpportunisticBatch(fw, generic_workload)
    pod = make_pod("pod", uid=first_id)
    state = CycleState()
    # the first pod: no state yet, no hint
    assert batch.get_node_hint(state, pod, first_sig, 1, snapshot([])) == ""
    if first_ok:
        batch.store_schedule_results(first_sig, "", first_chosen,
                                     None if first_others is None else nodes_heap(first_others), 1)
    cycle = 3 if skip_pod else 1 if same_cycle else 2
    pod2 = make_pod("pod2", uid=second_id)
    if second_nnn:
        pod2 = pod2.replace(nominated_node_name=second_nnn)
    # the lister holds the last chosen node, with the first pod on it
    snap = snapshot([first_chosen], [make_pod("pod", uid=first_id, node_name=first_chosen)])
    hint = batch.get_node_hint(state, pod2, second_sig, cycle, snap)
    assert hint == expected_hint
    batch.store_schedule_results(second_sig, hint, second_chosen, None, cycle)
    if expected_state is None:
        assert not batch.has_state()
    else:
        sig, remaining = expected_state
        assert batch.state.signature == sig
        assert [n.name for n in batch.state.nodes.unordered()] == remaining
    assert batch.batched_pods == (1 if expected_hint else 0)


def test_batch_expires_after_max_batch_age():
    fw = batch_framework()
    batch = OpportunisticBatch(fw)
    fw.clock.advance_to(100.0)
    batch.store_schedule_results("sig", "", "n3", nodes_heap(["n1"]), 1)
    snap = snapshot(["n3"], [make_pod("pod", uid=blocking("1"), node_name="n3")])
    fw.clock.advance_to(100.0 + MAX_BATCH_AGE)  # exactly the age: still young (upstream's After)
    assert batch.get_node_hint(CycleState(), make_pod("p2", uid=blocking("2")), "sig", 2, snap) == "n1"
    batch.store_schedule_results("sig", "n1", "n1", None, 2)
    fw.clock.advance_to(100.0 + MAX_BATCH_AGE + 0.001)  # a hint used does not refresh the age
    batch.state.nodes = nodes_heap(["n2"])
    assert batch.get_node_hint(CycleState(), make_pod("p3", uid=blocking("3")), "sig", 3, snap) == ""
    assert batch.flushes["expired"] == 1 and batch.has_state()  # a flush keeps the state
    assert batch.flushes_of(3) == ["expired"] and batch.flushes_of(2) == []
    batch.store_schedule_results(None, "", "n3", None, 3)
    assert batch.flushes_of(3) == ["empty_list", "expired"] and not batch.has_state()


# ------------------------------------------------------------------------------------------------
# TestBatchRescore / TestBatchRescoreChain
# ------------------------------------------------------------------------------------------------
N1_CACHED_SCORE = 50

RESCORE = [
    # name, fresh score of n2, filter err, prescore err, score err, normalize err, chosen missing,
    # cached missing, hint, remaining (in pop order)
    ("rescored node wins", 100, False, False, False, False, False, False, "n2", ["n1"]),
    ("rescored node loses", 10, False, False, False, False, False, False, "n1", ["n2"]),
    ("filter error gives no hint", 100, True, False, False, False, False, False, "", ["n1"]),
    ("prescore error gives no hint", 0, False, True, False, False, False, False, "", ["n1"]),
    ("score error gives no hint", 0, False, False, True, False, False, False, "", ["n1"]),
    ("normalize error gives no hint", 0, False, False, False, True, False, False, "", ["n1"]),
    ("chosen node missing from lister gives no hint", 0, False, False, False, False, True, False, "", ["n1"]),
    ("cached node missing from lister gives no hint", 100, False, False, False, False, False, True, "", ["n1"]),
]


@pytest.mark.parametrize("case", RESCORE, ids=lambda c: c[0])
def test_batch_rescore(case):
    (_, score, filter_err, pre_score_err, score_err, norm_err, chosen_missing, cached_missing,
     expected_hint, remaining) = case
    fw = batch_framework(ConfigurableScore(score, pre_score_err, score_err, norm_err), ConfigurableFilter(filter_err))
    batch = OpportunisticBatch(fw)
    pod1 = make_pod("pod1", uid=non_blocking("1"))
    cached = SortedScoredNodes([ScoredNode("n1", (("configurableScore", N1_CACHED_SCORE),))])
    batch.get_node_hint(CycleState(), pod1, "sig", 1, snapshot([]))
    batch.store_schedule_results("sig", "", "n2", cached, 1)
    if chosen_missing:
        snap = snapshot([])
    elif cached_missing:
        snap = snapshot(["n2"], [make_pod("pod1", uid=non_blocking("1"), node_name="n2")])
    else:
        snap = snapshot(["n1", "n2"], [make_pod("pod1", uid=non_blocking("1"), node_name="n2")])
    pod2 = make_pod("pod2", uid=non_blocking("2"))
    assert batch.get_node_hint(CycleState(), pod2, "sig", 2, snap) == expected_hint
    assert len(batch.state.nodes) == len(remaining)
    assert [batch.state.nodes.pop().name for _ in remaining] == remaining


def test_batch_rescore_chain():
    fw = batch_framework(ConfigurableScore(100))
    batch = OpportunisticBatch(fw)
    pod1 = make_pod("pod1", uid=non_blocking("1"))
    others = SortedScoredNodes([ScoredNode("n1", (("configurableScore", N1_CACHED_SCORE),))])
    batch.get_node_hint(CycleState(), pod1, "sig", 1, snapshot([]))
    batch.store_schedule_results("sig", "", "n2", others, 1)
    snap = snapshot(["n1", "n2"], [make_pod("pod1", uid=non_blocking("1"), node_name="n2")])
    # pod2: the rescore runs (n2 still fits) and n2 wins
    hint2 = batch.get_node_hint(CycleState(), make_pod("pod2", uid=non_blocking("2")), "sig", 2, snap)
    assert hint2 == "n2"
    batch.store_schedule_results("sig", hint2, "n2", None, 2)
    # pod3: again; n1 stays for a pod4
    hint3 = batch.get_node_hint(CycleState(), make_pod("pod3", uid=non_blocking("3")), "sig", 3, snap)
    assert hint3 == "n2"
    assert len(batch.state.nodes) == 1 and batch.state.nodes.pop().name == "n1"
    assert batch.rescore_attempts == 2 and batch.batched_pods == 1


def test_rescore_renormalizes_over_the_remaining_candidates():
    # NormalizeScores runs over the cached raw scores and the fresh one together: a plugin that
    # scales to the best candidate gives the remaining ones new totals
    class Scaling(ConfigurableScore):
        def normalize_score(self, state, pod, scores):
            top = max(s.score for s in scores) or 1
            for s in scores:
                s.score = s.score * 100 // top
            return None

    fw = batch_framework(Scaling(20))
    batch = OpportunisticBatch(fw)
    cached = SortedScoredNodes([ScoredNode("n1", (("configurableScore", 40),), 100),
                                ScoredNode("n3", (("configurableScore", 10),), 25)])
    batch.store_schedule_results("sig", "", "n2", cached, 1)
    snap = snapshot(["n1", "n2", "n3"])
    assert batch.get_node_hint(CycleState(), make_pod("p", uid=non_blocking("2")), "sig", 2, snap) == "n1"
    rest = sorted((n.name, n.total) for n in batch.state.nodes.unordered())
    assert rest == [("n2", 50), ("n3", 25)]


# ------------------------------------------------------------------------------------------------
# the heap: Go's container/heap (expected pop orders computed with Go 1.x's container/heap over
# the same totals, Less = higher total first)
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("totals, expected", [
    ([5, 5, 5, 5, 5, 5, 5], ["n0", "n6", "n5", "n4", "n3", "n2", "n1"]),
    ([1, 3, 3, 2, 3, 1, 2, 3], ["n1", "n7", "n4", "n2", "n6", "n3", "n5", "n0"]),
    ([10, 7, 10, 7, 10, 7], ["n0", "n4", "n2", "n3", "n1", "n5"]),
    ([4, 4, 9, 4, 4, 9, 4, 4, 4, 9], ["n9", "n2", "n5", "n7", "n6", "n4", "n1", "n3", "n8", "n0"]),
])
def test_sorted_scored_nodes_pops_as_go_container_heap(totals, expected):
    h = SortedScoredNodes([ScoredNode(f"n{i}", (), t) for i, t in enumerate(totals)])
    assert len(h) == len(totals)
    assert [h.pop().name for _ in totals] == expected
    assert len(h) == 0


def test_a_best_node_first_in_the_list_pops_first():
    # schedule_one builds the heap with the chosen node (one of the best) first: heap.Init leaves it
    # at the root, so Pop returns it
    for totals in ([5, 5, 5, 5], [9, 3, 9, 9, 1], [7]):
        h = SortedScoredNodes([ScoredNode(f"n{i}", (), t) for i, t in enumerate(totals)])
        assert h.pop().name == "n0"


def test_deferred_heap_equals_the_eager_one():
    from fastsched.runtime.batch import heap_after_pop

    nodes = [ScoredNode(f"n{i}", (), t) for i, t in enumerate([7, 9, 9, 3, 9, 1, 7])]
    built = []
    lazy = SortedScoredNodes.deferred(6, lambda: built.append(1) or heap_after_pop(nodes[1], [nodes[0], *nodes[2:]]))
    assert len(lazy) == 6 and built == []  # nothing built until used
    eager = SortedScoredNodes([nodes[1], nodes[0], *nodes[2:]])
    assert eager.pop().name == "n1"
    assert [n.name for n in lazy.unordered()] == [n.name for n in eager.unordered()] and built == [1]
    assert [lazy.pop().name for _ in range(6)] == [eager.pop().name for _ in range(6)]
    assert len(lazy) == 0
