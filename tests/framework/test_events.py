"""Cluster events: upstream v1.37.2's ActionType bits, ``MatchClusterEvents`` (types_test.go
TestClusterEventMatching) and ``PodSchedulingPropertiesChange`` (events_test.go
Test_podSchedulingPropertiesChange)."""
from __future__ import annotations

import pytest

from fastsched.api import Pod, Toleration
from fastsched.framework import ActionType, ClusterEvent, EventResource
from fastsched.framework.events import (EVENT_TARGET_POD_UPDATE, event_label, match_cluster_events,
                                        pod_scheduling_properties_change)
from fastsched.testing import make_pod


def test_action_type_bits_are_upstreams():
    """kube-scheduler v0.37.2 framework/types.go: ``1 << iota`` in this order (MatchClusterEvents
    compares the values, so the order is part of the semantics)."""
    order = [ActionType.ADD, ActionType.DELETE, ActionType.UPDATE_NODE_ALLOCATABLE, ActionType.UPDATE_NODE_LABEL,
             ActionType.UPDATE_NODE_TAINT, ActionType.UPDATE_NODE_CONDITION, ActionType.UPDATE_NODE_ANNOTATION,
             ActionType.UPDATE_NODE_DECLARED_FEATURE, ActionType.UPDATE_NODE_PREEMPTION_POLICY,
             ActionType.UPDATE_POD_LABEL, ActionType.UPDATE_POD_SCALE_DOWN, ActionType.UPDATE_POD_SCALE_UP,
             ActionType.UPDATE_POD_TOLERATIONS, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED,
             ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM]
    assert [int(a) for a in order] == [1 << i for i in range(len(order))]
    assert int(ActionType.ALL) == (1 << len(order)) - 1
    assert int(ActionType.UPDATE) == int(ActionType.ALL) & ~3
    assert [event_label(ClusterEvent(EventResource.POD, a)) for a in order[7:12]] == [
        "PodUpdateNodeDeclaredFeature", "PodUpdateNodePreemptionPolicy", "PodUpdatePodLabel", "PodUpdatePodScaleDown",
        "PodUpdatePodScaleUp"]
    assert event_label(EVENT_TARGET_POD_UPDATE) == "TargetPodUpdate"


R, A = EventResource, ActionType
_WILD = R.WILDCARD


# Upstream TestClusterEventMatching (v1.37.2), in its order.
@pytest.mark.parametrize("registered,incoming,want", [
    ((_WILD, A.ALL), (R.POD, A.UPDATE_NODE_LABEL), True),
    ((R.POD, A.UPDATE_NODE_LABEL | A.UPDATE_NODE_TAINT), (R.POD, A.UPDATE_NODE_LABEL), True),
    ((R.POD, A.UPDATE_NODE_LABEL | A.UPDATE_NODE_TAINT), (R.UNSCHEDULED_POD, A.UPDATE_NODE_LABEL), True),
    ((_WILD, A.UPDATE_NODE_LABEL), (R.POD, A.UPDATE_NODE_LABEL), True),
    ((_WILD, A.UPDATE_NODE_LABEL), (R.POD, A.UPDATE_NODE_ALLOCATABLE), False),
    ((R.POD, A.UPDATE_NODE_LABEL), (_WILD, A.UPDATE_NODE_LABEL), False),
    ((_WILD, A.UPDATE_NODE_LABEL), (R.POD, A.UPDATE), False),
    ((_WILD, A.UPDATE), (R.POD, A.UPDATE_NODE_LABEL), True),
    ((R.POD, A.UPDATE_NODE_LABEL | A.UPDATE_NODE_TAINT), (R.UNSCHEDULED_POD, A.UPDATE_NODE_LABEL), True),
    ((R.POD, A.UPDATE_NODE_LABEL), (R.ASSIGNED_POD, A.UPDATE_NODE_LABEL), True),
    ((R.POD, A.UPDATE_NODE_TAINT), (R.TARGET_POD, A.UPDATE_NODE_TAINT), True),
    ((R.ASSIGNED_POD, A.ADD), (R.UNSCHEDULED_POD, A.ADD), False),
    ((R.ASSIGNED_POD, A.UPDATE), (R.TARGET_POD, A.UPDATE), False),
    ((R.TARGET_POD, A.UPDATE), (R.ASSIGNED_POD, A.UPDATE), False),
    ((R.ASSIGNED_POD, A.ADD), (R.POD, A.ADD), False),
    ((R.ASSIGNED_POD, A.ADD), (_WILD, A.ADD), False),
    ((R.UNSCHEDULED_POD, A.ADD), (R.POD, A.ADD), False),
    ((R.UNSCHEDULED_POD, A.ADD), (_WILD, A.ADD), False),
    ((_WILD, A.ALL), (R.TARGET_POD, A.UPDATE), True),
], ids=["wildcard-matches-all", "pod-same-action", "pod-matches-unscheduled-pod", "star-same-action",
        "star-other-action", "incoming-star", "star-too-broad-incoming", "star-more-specific-incoming",
        "pod-matches-unscheduled-pod-2", "pod-matches-assigned-pod", "pod-matches-target-pod",
        "assigned-not-unscheduled", "assigned-not-target", "target-not-assigned", "assigned-not-pod",
        "assigned-not-star", "unscheduled-not-pod", "unscheduled-not-star", "wildcard-matches-target-pod"])
def test_match_cluster_events(registered, incoming, want):
    assert match_cluster_events(ClusterEvent(*registered), ClusterEvent(*incoming)) is want


def _cpu(m: str, **kw) -> Pod:
    return make_pod("p", uid="p", requests={"cpu": m}, **kw)


_CLAIM_A = {"name": "my-claim", "resourceClaimName": "claim"}
_CLAIM_B = {"name": "my-claim-2", "resourceClaimName": "claim-2"}


def _pod(**fields) -> Pod:
    return Pod(name="p", uid="p").replace(**fields)


# Upstream Test_podSchedulingPropertiesChange (v1.37.2). Not transcribed: the "feature disabled"
# rows (DynamicResourceAllocation is locked on at v1.37) and the extendedResourceClaimStatus rows
# (that status is not modelled). The requests are the containers' specs: upstream's pods carry the
# same amounts as allocatedResources.
@pytest.mark.parametrize("new,old,target,want", [
    (_pod(labels={"foo": "bar"}, node_name="node"), _pod(labels={"foo": "bar2"}, node_name="node"), False,
     [(R.ASSIGNED_POD, A.UPDATE_POD_LABEL)]),
    (_pod(labels={"foo": "bar"}), _pod(labels={"foo": "bar2"}), False, [(R.UNSCHEDULED_POD, A.UPDATE_POD_LABEL)]),
    (_cpu("100m"), _cpu("101m"), False, [(R.UNSCHEDULED_POD, A.UPDATE_POD_SCALE_DOWN)]),
    (_cpu("101m"), _cpu("100m"), False, [(R.UNSCHEDULED_POD, A.UPDATE_POD_SCALE_UP)]),
    (_cpu("100m", labels={"foo": "bar"}), _cpu("101m"), False,
     [(R.UNSCHEDULED_POD, A.UPDATE_POD_LABEL), (R.UNSCHEDULED_POD, A.UPDATE_POD_SCALE_DOWN)]),
    (_pod(annotations={"foo": "bar"}), _pod(annotations={"foo": "bar2"}), False, [(R.UNSCHEDULED_POD, A.UPDATE)]),
    (_pod(), _pod(scheduling_gates=("foo",)), True, [(R.TARGET_POD, A.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)]),
    (_pod(scheduling_gates=("foo",)), _pod(scheduling_gates=("foo", "bar")), True, [(R.TARGET_POD, A.UPDATE)]),
    (_pod(tolerations=(Toleration(key="key", operator="Exists"), Toleration(key="key2", operator="Exists"))),
     _pod(tolerations=(Toleration(key="key", operator="Exists"),)), True, [(R.TARGET_POD, A.UPDATE_POD_TOLERATIONS)]),
    (_pod(resource_claim_statuses=(_CLAIM_A,)), _pod(), True, [(R.TARGET_POD, A.UPDATE_POD_GENERATED_RESOURCE_CLAIM)]),
    (_pod(resource_claim_statuses=(_CLAIM_A, _CLAIM_B)), _pod(resource_claim_statuses=(_CLAIM_B, _CLAIM_A)), True,
     [(R.TARGET_POD, A.UPDATE_POD_GENERATED_RESOURCE_CLAIM)]),
    (_pod(node_name="node"), _pod(node_name="node", scheduling_gates=("foo",)), True,
     [(R.ASSIGNED_POD, A.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)]),
], ids=["assigned-pod-updated", "unscheduled-pod-label-updated", "scaled-down", "scaled-up",
        "scaled-down-and-label", "untracked-properties", "gates-eliminated", "gates-removed-not-eliminated",
        "tolerations-updated", "claim-statuses-change", "claim-statuses-swapped", "assigned-takes-precedence"])
def test_pod_scheduling_properties_change(new, old, target, want):
    got = pod_scheduling_properties_change(new, old, target)
    assert [(e.resource, e.action_type) for e in got] == want


def test_pod_scheduling_properties_change_request_added_or_removed():
    """extractPodScaleUp / extractPodScaleDown: a resource requested only by the new pod is a scale
    up, one requested only by the old pod a scale down; the queue's own updates are TargetPod."""
    with_mem = make_pod("p", uid="p", requests={"cpu": "100m", "memory": "1Gi"})
    without = make_pod("p", uid="p", requests={"cpu": "100m"})
    assert [e.action_type for e in pod_scheduling_properties_change(with_mem, without, True)] == \
        [A.UPDATE_POD_SCALE_UP]
    assert [(e.resource, e.action_type) for e in pod_scheduling_properties_change(without, with_mem, True)] == \
        [(R.TARGET_POD, A.UPDATE_POD_SCALE_DOWN)]
