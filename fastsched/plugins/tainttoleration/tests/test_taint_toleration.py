"""TaintToleration: upstream's taint_toleration_test.go cases, and batch == per-node."""
from __future__ import annotations

import random

import numpy as np
import pytest

from fastsched.api import Pod, Toleration
from fastsched.framework import ActionType, Code, CycleState, EventResource, NodeInfo, NodeScore, QueueingHint
from fastsched.plugins.helper.tests.support import random_toleration_pod, single_plugin_framework
from fastsched.plugins.tainttoleration import NAME, TaintToleration, new
from fastsched.snapshot import build_snapshot
from fastsched.testing import assert_paths_equivalent, make_node, random_pod, random_snapshot


def taint(key, value, effect):
    return {"key": key, "value": value, "effect": effect}


def tol(key, operator, value="", effect=""):
    return Toleration(key=key, operator=operator, value=value, effect=effect)


def untolerated(key_value: str):
    """The verdict on a node with untolerated taint ``key_value``: v1.34.4's message no longer
    names the taint (upstream #134740), the tables still say which taint is at fault."""
    return (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ["node(s) had untolerated taint(s)"])


def _verdict(status):
    return None if status is None else (status.code(), status.reasons())


# (name, pod tolerations, node taints, want): upstream's TestTaintTolerationFilter table, plus edges
FILTER_CASES = [
    ("no tolerations, nonempty taints", (), [taint("dedicated", "user1", "NoSchedule")], untolerated("dedicated: user1")),
    ("dedicated node for user1", (tol("dedicated", "Equal", "user1", "NoSchedule"),),
     [taint("dedicated", "user1", "NoSchedule")], None),
    ("dedicated node for user2", (tol("dedicated", "Equal", "user2", "NoSchedule"),),
     [taint("dedicated", "user1", "NoSchedule")], untolerated("dedicated: user1")),
    ("Exists tolerates any value", (tol("foo", "Exists", effect="NoSchedule"),),
     [taint("foo", "bar", "NoSchedule")], None),
    ("several tolerations, all taints tolerated",
     (tol("dedicated", "Equal", "user2", "NoSchedule"), tol("foo", "Exists", effect="NoSchedule")),
     [taint("dedicated", "user2", "NoSchedule"), taint("foo", "bar", "NoSchedule")], None),
    ("non-empty effect must match", (tol("foo", "Equal", "bar", "PreferNoSchedule"),),
     [taint("foo", "bar", "NoSchedule")], untolerated("foo: bar")),
    ("empty effect tolerates every effect", (tol("foo", "Equal", "bar"),), [taint("foo", "bar", "NoSchedule")], None),
    ("PreferNoSchedule taints do not filter", (tol("dedicated", "Equal", "user2", "NoSchedule"),),
     [taint("dedicated", "user1", "PreferNoSchedule")], None),
    ("no tolerations, PreferNoSchedule taint", (), [taint("dedicated", "user1", "PreferNoSchedule")], None),
    ("empty taint value", (), [taint("spot", "", "NoExecute")], untolerated("spot: ")),
    ("first untolerated taint in node order", (tol("a", "Exists"),),
     [taint("z", "1", "PreferNoSchedule"), taint("a", "x", "NoSchedule"), taint("c", "3", "NoExecute"),
      taint("b", "2", "NoSchedule")], untolerated("c: 3")),
    ("empty key with Exists tolerates all", (tol("", "Exists"),), [taint("x", "y", "NoExecute")], None),
    ("empty operator means Equal", (tol("x", "", "y"),), [taint("x", "y", "NoExecute")], None),
    ("Equal with empty value only matches an empty value", (tol("x", "Equal"),), [taint("x", "y", "NoExecute")],
     untolerated("x: y")),
]


@pytest.mark.parametrize("name, tolerations, taints, want", FILTER_CASES, ids=[c[0] for c in FILTER_CASES])
def test_filter(name, tolerations, taints, want):
    node = make_node("nodeA", taints=taints)
    pod = Pod(name="p", tolerations=tolerations)
    plugin = new(None, None)
    assert _verdict(plugin.filter(CycleState(), pod, NodeInfo(node))) == want
    snapshot = build_snapshot([node, make_node("clean")])
    result = plugin.filter_vectorized(CycleState(), pod, snapshot.batch())
    position = snapshot.batch().names.index("nodeA")
    assert _verdict(result.status(position)) == want
    assert result.status(1 - position) is None


# (name, pod tolerations, node taints, want): upstream's TestTaintTolerationFilterWithFeatureGate (v1.37.2),
# the rows with TaintTolerationComparisonOperators off. The gate is alpha and off in v1.37.2 and fixed
# off in fastsched (fastsched.features): a Gt/Lt toleration tolerates nothing. The table's two rows
# with the gate on ("... can be scheduled when feature gate is enabled ...") need the numeric
# comparison, which fastsched does not model.
_SLA = "node.kubernetes.io/sla"
FILTER_GATE_OFF_CASES = [
    ("Pod with Gt toleration cannot be scheduled when feature gate is disabled",
     (tol(_SLA, "Gt", "750", "NoSchedule"),), [taint(_SLA, "950", "NoSchedule")],
     untolerated("node.kubernetes.io/sla: 950")),
    ("Pod with Lt toleration cannot be scheduled when feature gate is disabled",
     (tol(_SLA, "Lt", "950", "NoSchedule"),), [taint(_SLA, "800", "NoSchedule")],
     untolerated("node.kubernetes.io/sla: 800")),
    ("Pod with mixed tolerations (Equal and Gt) when feature gate is disabled - only Equal is honored",
     (tol("dedicated", "Equal", "user1", "NoSchedule"), tol(_SLA, "Gt", "750", "NoSchedule")),
     [taint("dedicated", "user1", "NoSchedule")], None),
    ("Pod with mixed tolerations, Gt toleration needed but filtered out when feature gate is disabled",
     (tol("dedicated", "Equal", "user1", "NoSchedule"), tol(_SLA, "Gt", "750", "NoSchedule")),
     [taint("dedicated", "user1", "NoSchedule"), taint(_SLA, "950", "NoSchedule")],
     untolerated("node.kubernetes.io/sla: 950")),
]


@pytest.mark.parametrize("name, tolerations, taints, want", FILTER_GATE_OFF_CASES,
                         ids=[c[0] for c in FILTER_GATE_OFF_CASES])
def test_filter_with_comparison_operators_gate_off(name, tolerations, taints, want):
    test_filter(name, tolerations, taints, want)


# (name, pod tolerations, taints per node, want normalized scores): upstream's TestTaintTolerationScore
SCORE_CASES = [
    ("tolerated taints score higher", (tol("foo", "Equal", "bar", "PreferNoSchedule"),),
     [[taint("foo", "bar", "PreferNoSchedule")], [taint("foo", "blah", "PreferNoSchedule")]], [100, 0]),
    ("all taints tolerated: same score whatever their number",
     (tol("cpu-type", "Equal", "arm64", "PreferNoSchedule"), tol("disk-type", "Equal", "ssd", "PreferNoSchedule")),
     [[], [taint("cpu-type", "arm64", "PreferNoSchedule")],
      [taint("cpu-type", "arm64", "PreferNoSchedule"), taint("disk-type", "ssd", "PreferNoSchedule")]], [100, 100, 100]),
    ("more intolerable taints, lower score", (tol("foo", "Equal", "bar", "PreferNoSchedule"),),
     [[], [taint("cpu-type", "arm64", "PreferNoSchedule")],
      [taint("cpu-type", "arm64", "PreferNoSchedule"), taint("disk-type", "ssd", "PreferNoSchedule")]], [100, 50, 0]),
    ("only PreferNoSchedule taints and tolerations count",
     (tol("cpu-type", "Equal", "arm64", "NoSchedule"), tol("disk-type", "Equal", "ssd", "NoSchedule")),
     [[], [taint("cpu-type", "arm64", "NoSchedule")],
      [taint("cpu-type", "arm64", "PreferNoSchedule"), taint("disk-type", "ssd", "PreferNoSchedule")]], [100, 100, 0]),
    ("no taints and no tolerations", (), [[], [taint("cpu-type", "arm64", "PreferNoSchedule")]], [100, 0]),
    ("empty-effect toleration counts", (tol("spot", "Exists"),),
     [[taint("spot", "", "PreferNoSchedule")], [taint("x", "", "PreferNoSchedule")]], [100, 0]),
    ("nothing intolerable anywhere", (), [[], [taint("x", "", "NoSchedule")]], [100, 100]),
]


@pytest.mark.parametrize("name, tolerations, node_taints, want", SCORE_CASES, ids=[c[0] for c in SCORE_CASES])
def test_score(name, tolerations, node_taints, want):
    nodes = [make_node(f"node{i}", taints=taints) for i, taints in enumerate(node_taints)]
    pod = Pod(name="p", tolerations=tolerations)
    plugin = new(None, None)
    state = CycleState()
    assert plugin.pre_score(state, pod, nodes) is None
    scores = []
    for node in nodes:
        score, status = plugin.score(state, pod, NodeInfo(node))
        assert status is None
        scores.append(NodeScore(node.name, score))
    assert plugin.score_extensions().normalize_score(state, pod, scores) is None
    assert [s.score for s in scores] == want

    snapshot = build_snapshot(nodes)
    batch = snapshot.batch()
    raw, status = plugin.score_vectorized(state, pod, batch)
    assert status is None and raw.dtype == np.int64
    plugin.normalize_score_vectorized(state, pod, raw, batch)
    assert dict(zip(batch.names, raw.tolist())) == {f"node{i}": s for i, s in enumerate(want)}


def test_score_without_pre_score_state_is_an_error():
    plugin = TaintToleration()
    node = make_node("n")
    score, status = plugin.score(CycleState(), Pod(name="p"), NodeInfo(node))
    assert (score, status.code()) == (0, Code.ERROR)
    assert status.reasons() == ['failed to read "PreScoreTaintToleration" from cycleState: not found']
    _, batch_status = plugin.score_vectorized(CycleState(), Pod(name="p"), build_snapshot([node]).batch())
    assert batch_status.reasons() == status.reasons()


def test_events_to_register():
    assert [(e.event.resource, e.event.action_type) for e in TaintToleration().events_to_register()] == [
        (EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
        (EventResource.TARGET_POD, ActionType.UPDATE_POD_TOLERATIONS)]
    assert all(e.queueing_hint_fn is not None for e in TaintToleration().events_to_register())
    assert [e.event.action_type for e in TaintToleration(enable_scheduling_queue_hint=False).events_to_register()] == [
        ActionType.ADD | ActionType.UPDATE_NODE_TAINT | ActionType.UPDATE_NODE_LABEL]


def _tainted(value: str, *more: str):
    return make_node("nodeA", taints=[{"key": "dedicated", "value": v, "effect": "NoSchedule"} for v in (value, *more)])


_USER2 = Pod(name="pod1", tolerations=(Toleration(key="dedicated", operator="Equal", value="user2", effect="NoSchedule"),))


# Upstream TestIsSchedulableAfterNodeChange (v1.37.2).
@pytest.mark.parametrize("pod,old,new_obj,want,err", [
    (None, None, "not-a-node", QueueingHint.QUEUE, True),
    (None, "not-a-node", _tainted("user1"), QueueingHint.QUEUE, True),
    (_USER2, None, _tainted("user1"), QueueingHint.QUEUE_SKIP, False),
    (_USER2, None, _tainted("user2"), QueueingHint.QUEUE, False),
    (_USER2, _tainted("user1"), _tainted("user1", "user3"), QueueingHint.QUEUE_SKIP, False),
    (_USER2, _tainted("user1"), _tainted("user2"), QueueingHint.QUEUE, False),
], ids=["backoff-wrong-new-object", "backoff-wrong-old-object", "skip-queue-on-untoleratedtaint-node-added",
        "queue-on-toleratedtaint-node-added", "skip-unrelated-change", "queue-on-taint-change"])
def test_is_schedulable_after_node_change(pod, old, new_obj, want, err):
    hint, error = TaintToleration().is_schedulable_after_node_change(pod, old, new_obj)
    assert hint == want and (error is not None) == err
    if not err and old is not None:  # not upstream's: tolerated before and after is no change
        assert TaintToleration().is_schedulable_after_node_change(pod, new_obj, new_obj)[0] == QueueingHint.QUEUE_SKIP


_POD_1 = Pod(name="pod-1", namespace="ns-1")


# Upstream Test_isSchedulableAfterTargetPodTolerationChange (v1.37.2): (name, pod, old, new, hint).
@pytest.mark.parametrize("name,the_pod,old,new_pod,want", [
    ("queue-on-toleration-added", _POD_1, _POD_1,
     _POD_1.replace(tolerations=(Toleration(key="foo", effect="NoSchedule"),)), QueueingHint.QUEUE),
], ids=["queue-on-toleration-added"])
def test_is_schedulable_after_target_pod_toleration_change(name, the_pod, old, new_pod, want):
    assert TaintToleration().is_schedulable_after_target_pod_toleration_change(the_pod, old, new_pod) == (want, None)


@pytest.mark.parametrize("seed", range(10))
def test_batch_equals_per_node(seed):
    fw = single_plugin_framework(NAME, weight=3)
    snapshot = random_snapshot(seed, 250, 500)
    rng = random.Random(seed)
    rejected = distinct_reasons = scored_unevenly = 0
    for i in range(10):
        pod = random_pod(rng, i) if i % 2 else random_toleration_pod(rng, i)
        summary = assert_paths_equivalent(fw, snapshot, pod)
        rejected += len(snapshot) - summary["feasible"]
        state = CycleState()
        fw.run_pre_filter_plugins(state, pod, snapshot.batch())
        result = fw.run_filter_plugins_vectorized(state, pod, snapshot.batch())
        distinct_reasons = max(distinct_reasons, len({str(result.status(j)) for j in range(len(snapshot))}))
        feasible = snapshot.batch().select(np.flatnonzero(result.feasible()))
        if len(feasible):
            fw.run_pre_score_plugins(state, pod, feasible)
            matrix, _ = fw.run_score_plugins_matrix(state, pod, feasible)
            scored_unevenly += len(set(matrix.normalized[0].tolist())) > 1
    # two statuses: feasible, and v1.34.4's one reason for every untolerated taint
    assert rejected >= 50 and distinct_reasons == 2 and scored_unevenly >= 3


def test_pre_filter_answers_success_also_for_a_deferred_resize():
    """v1.37.2 PreFilter answers Skip only for a pod whose resize is deferred with
    InPlacePodVerticalScalingSchedulerPreemption on (TestTaintToleration_DeferredResizeSkipped);
    the gate is off (fixed) in fastsched: Success, and Filter judges the pod's tolerations."""
    pod = Pod.from_manifest({"metadata": {"name": "p", "uid": "p"}, "spec": {"containers": []},
                             "status": {"conditions": [{"type": "PodResizePending", "status": "True",
                                                        "reason": "Deferred"}]}}, validate=False)
    plugin = TaintToleration()
    result, status = plugin.pre_filter(CycleState(), pod, [])
    assert result is None and (status is None or status.is_success())
    info = NodeInfo(make_node("n1", taints=[{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]))
    assert plugin.filter(CycleState(), pod, info).code() == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
