"""NodeUnschedulable: upstream's node_unschedulable_test.go cases, and batch == per-node."""
from __future__ import annotations

import random

import pytest

from fastsched.api import Pod, Toleration
from fastsched.framework import ActionType, Code, CycleState, EventResource, NodeInfo, QueueingHint
from fastsched.plugins.helper.tests.support import random_toleration_pod, single_plugin_framework
from fastsched.plugins.nodeunschedulable import (ERR_REASON_UNSCHEDULABLE, NAME, NodeUnschedulable, new,
                                                 tolerates_unschedulable)
from fastsched.snapshot import build_snapshot
from fastsched.testing import assert_paths_equivalent, make_node, random_pod, random_snapshot

UNSCHEDULABLE = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [ERR_REASON_UNSCHEDULABLE])
OK = None


def _verdict(status):
    return None if status is None else (status.code(), status.reasons())


@pytest.mark.parametrize("unschedulable, tolerations, want", [
    (False, (), OK),                                             # schedulable node
    (True, (), UNSCHEDULABLE),                                   # unschedulable, no toleration
    (True, (Toleration(key="node.kubernetes.io/unschedulable", effect="NoSchedule"),), OK),
    (True, (Toleration(key="node.kubernetes.io/unschedulable", operator="Exists", effect="NoSchedule"),), OK),
    (True, (Toleration(operator="Exists"),), OK),                # tolerates everything
    (True, (Toleration(key="node.kubernetes.io/unschedulable", operator="Exists"),), OK),  # any effect
    (True, (Toleration(key="node.kubernetes.io/unschedulable", effect="NoExecute"),), UNSCHEDULABLE),
    (True, (Toleration(key="node.kubernetes.io/unschedulable", value="x", effect="NoSchedule"),), UNSCHEDULABLE),
    (True, (Toleration(key="other", operator="Exists"),), UNSCHEDULABLE),
])
def test_filter(unschedulable, tolerations, want):
    node = make_node("n", unschedulable=unschedulable)
    pod = Pod(name="p", tolerations=tolerations)
    plugin = new(None, None)
    assert _verdict(plugin.filter(CycleState(), pod, NodeInfo(node))) == want
    snapshot = build_snapshot([node])
    assert _verdict(plugin.filter_vectorized(CycleState(), pod, snapshot.batch()).status(0)) == want


def test_events_to_register():
    events = NodeUnschedulable().events_to_register()
    assert [(e.event.resource, e.event.action_type) for e in events] == [
        (EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
        (EventResource.TARGET_POD, ActionType.UPDATE_POD_TOLERATIONS)]
    assert all(e.queueing_hint_fn is not None for e in events)
    events = NodeUnschedulable(enable_scheduling_queue_hint=False).events_to_register()
    assert [(e.event.resource, e.event.action_type) for e in events] == [
        (EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT | ActionType.UPDATE_NODE_LABEL)]


TAINT_NOT_READY = {"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}


# Upstream TestIsSchedulableAfterNodeChange (v1.37.2).
@pytest.mark.parametrize("old,new_obj,want,err", [
    (None, "not-a-node", QueueingHint.QUEUE, True),
    ("not-a-node", make_node(unschedulable=True), QueueingHint.QUEUE, True),
    (None, make_node(unschedulable=True), QueueingHint.QUEUE_SKIP, False),
    (None, make_node(unschedulable=False), QueueingHint.QUEUE, False),
    (make_node(unschedulable=True), make_node(unschedulable=True, taints=[TAINT_NOT_READY]),
     QueueingHint.QUEUE_SKIP, False),
    (make_node(unschedulable=False), make_node(unschedulable=False, taints=[TAINT_NOT_READY]),
     QueueingHint.QUEUE_SKIP, False),
    (make_node(unschedulable=True), make_node(unschedulable=False), QueueingHint.QUEUE, False),
], ids=["error-wrong-new-object", "error-wrong-old-object", "skip-queue-on-unschedulable-node-added",
        "queue-on-schedulable-node-added", "skip-unrelated-change-unschedulable-true",
        "skip-unrelated-change-unschedulable-false", "queue-on-unschedulable-field-change"])
def test_is_schedulable_after_node_change(old, new_obj, want, err):
    hint, error = NodeUnschedulable().is_schedulable_after_node_change(Pod(name="p"), old, new_obj)
    assert hint == want and (error is not None) == err


# Upstream TestIsSchedulableAfterPodTolerationChange (v1.37.2; isSchedulableAfterTargetPodTolerationChange).
@pytest.mark.parametrize("old,new_obj,want,err", [
    (None, "not-a-pod", QueueingHint.QUEUE, True),
    ("not-a-pod", Pod(name="p"), QueueingHint.QUEUE, True),
    (Pod(name="p", uid="uid"),
     Pod(name="p", uid="uid", tolerations=(Toleration(key="node.kubernetes.io/unschedulable", operator="Exists"),)),
     QueueingHint.QUEUE, False),
    (Pod(name="p", uid="uid"), Pod(name="p", uid="uid", tolerations=(Toleration(key="unrelated-key", operator="Exists"),)),
     QueueingHint.QUEUE_SKIP, False),
], ids=["error-wrong-new-object", "error-wrong-old-object", "queue-when-the-unsched-pod-gets-toleration",
        "skip-when-the-unsched-pod-gets-unrelated-toleration"])
def test_is_schedulable_after_target_pod_toleration_change(old, new_obj, want, err):
    hint, error = NodeUnschedulable().is_schedulable_after_target_pod_toleration_change(
        Pod(name="p", uid="uid"), old, new_obj)
    assert hint == want and (error is not None) == err


@pytest.mark.parametrize("seed", range(10))
def test_batch_equals_per_node(seed):
    fw = single_plugin_framework(NAME)
    snapshot = random_snapshot(seed, 250, 500)
    rng = random.Random(seed)
    n_unschedulable = int(snapshot.table.unschedulable.sum())
    rejected = tolerating = 0
    for i in range(12):
        pod = random_pod(rng, i) if i % 2 else random_toleration_pod(rng, i)
        if i % 4 == 0:
            pod = pod.replace(tolerations=pod.tolerations + (
                Toleration(key="node.kubernetes.io/unschedulable", operator="Exists"),))
        summary = assert_paths_equivalent(fw, snapshot, pod)
        if tolerates_unschedulable(pod):
            tolerating += 1
            assert summary["feasible"] == len(snapshot)
        else:
            rejected += 1
            assert summary["feasible"] == len(snapshot) - n_unschedulable
    assert n_unschedulable > 0 and rejected >= 4 and tolerating >= 3


def test_pre_filter_answers_success_also_for_a_deferred_resize():
    """v1.37.2 PreFilter answers Skip only for a pod whose resize is deferred with
    InPlacePodVerticalScalingSchedulerPreemption on (TestNodeUnschedulable_DeferredResizeSkipped);
    the gate is off (fixed) in fastsched: Success, and Filter judges the pod as any other."""
    pod = Pod.from_manifest({"metadata": {"name": "p", "uid": "p"}, "spec": {"containers": []},
                             "status": {"conditions": [{"type": "PodResizePending", "status": "True",
                                                        "reason": "Deferred"}]}}, validate=False)
    result, status = NodeUnschedulable().pre_filter(CycleState(), pod, [])
    assert result is None and (status is None or status.is_success())
    info = NodeInfo(make_node("n1", unschedulable=True))
    assert NodeUnschedulable().filter(CycleState(), pod, info).code() == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
