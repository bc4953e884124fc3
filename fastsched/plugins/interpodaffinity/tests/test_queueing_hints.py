"""InterPodAffinity's queueing hints, transcribed from upstream v1.37.2 ``interpodaffinity/plugin_test.go``
(``Test_isSchedulableAfterAssignedPodChange``, ``Test_isSchedulableAfterTargetPodUpdateLabel``,
``Test_isSchedulableAfterNodeChange``), and the events the plugin registers."""
from __future__ import annotations

import pytest

from fastsched.config.args import InterPodAffinityArgs
from fastsched.framework import ActionType, ClusterEvent, EventResource, QueueingHint
from fastsched.framework.events import match_cluster_events
from fastsched.plugins.interpodaffinity.plugin import InterPodAffinity
from fastsched.testing import make_node, make_pod

Q, SKIP = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP


def _term(key, topology, values=None):
    expr = {"key": key, "operator": "In", "values": list(values)} if values is not None else \
        {"key": key, "operator": "Exists"}
    return {"labelSelector": {"matchExpressions": [expr]}, "topologyKey": topology}


def pod(name="p", *, labels=None, node=None, nominated=None, affinity=(), anti=()):
    spec = {}
    if affinity or anti:
        spec["affinity"] = {}
        if affinity:
            spec["affinity"]["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": list(affinity)}
        if anti:
            spec["affinity"]["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": list(anti)}
    p = make_pod(name, uid=name, labels=labels, node_name=node, **spec)
    return p.replace(nominated_node_name=nominated) if nominated else p


SCAN = [_term("service", "region", ["securityscan", "value2"])]
TWO_EXISTS = [_term("aaa", "hostname"), _term("bbb", "hostname")]
TWO_ANTI = [_term("service", "region", ["securityscan"]), _term("app", "region", ["web"])]
N = "fake-node"

ASSIGNED = [
    ("add a pod which matches the pod affinity", pod(affinity=SCAN), None,
     pod("other", node=N, labels={"service": "securityscan"}), Q),
    ("add an un-scheduled pod", pod(affinity=SCAN), None, pod("other", labels={"service": "securityscan"}), SKIP),
    ("add a pod which doesn't match the pod affinity", pod(affinity=SCAN), None,
     pod("other", node=N, labels={"aaa": "a"}), SKIP),
    ("update a pod from non-match to match pod affinity", pod(affinity=SCAN),
     pod("other", node=N, labels={"aaa": "a"}), pod("other", node=N, labels={"service": "securityscan"}), Q),
    ("the updating pod matches target pod's affinity both before and after label changes", pod(affinity=SCAN),
     pod("other", node=N, labels={"service": "value2"}), pod("other", node=N, labels={"service": "securityscan"}),
     SKIP),
    ("update an un-scheduled pod", pod(affinity=SCAN), pod("other", labels={"aaa": "a"}),
     pod("other", labels={"service": "securityscan"}), SKIP),
    ("update a pod from match to non-match the pod affinity", pod(affinity=SCAN),
     pod("other", node=N, labels={"service": "securityscan"}), pod("other", node=N, labels={"aaa": "a"}), SKIP),
    ("update a pod from match to non-match pod's affinity - multiple terms case", pod(affinity=TWO_EXISTS),
     pod("other", node=N, labels={"aaa": "a"}), pod("other", node=N, labels={"service": "securityscan"}), SKIP),
    ("update a pod from non-match to match pod's affinity - multiple terms case", pod(affinity=TWO_EXISTS),
     pod("other", node=N, labels={"aaa": "a"}), pod("other", node=N, labels={"aaa": "", "bbb": ""}), Q),
    ("modify pod label to change it from satisfying pod anti-affinity to not satisfying anti-affinity",
     pod(anti=SCAN), pod("other", node=N, labels={"service": "securityscan"}),
     pod("other", node=N, labels={"service": "aaaa"}), Q),
    ("modify pod label to change it from not satisfying pod anti-affinity to satisfying anti-affinity",
     pod(anti=SCAN), pod("other", node=N, labels={"service": "bbb"}),
     pod("other", node=N, labels={"service": "securityscan"}), SKIP),
    ("delete a pod which doesn't match pod's anti-affinity", pod(anti=SCAN), pod("other", node=N, labels={"aaa": "a"}),
     None, SKIP),
    ("delete a pod which matches pod's anti-affinity", pod(anti=SCAN),
     pod("other", node=N, labels={"service": "securityscan"}), None, Q),
    ("delete a pod with anti-affinity that matches pending pod", pod(labels={"service": "securityscan"}),
     pod("other", node=N, anti=SCAN), None, Q),
    ("delete a pod with anti-affinity that doesn't match pending pod", pod(labels={"service": "foo"}),
     pod("other", node=N, anti=SCAN), None, SKIP),
    ("delete a pod which doesn't match pending pod's anti-affinity and has anti-affinity that doesn't match "
     "pending pod", pod(anti=SCAN, labels={"service": "foo"}), pod("other", node=N, anti=SCAN, labels={"service": "foo"}),
     None, SKIP),
    ("delete a nominated pod which doesn't match pod's anti-affinity", pod(anti=SCAN),
     pod("other", nominated=N, labels={"aaa": "a"}), None, SKIP),
    ("delete a nominated pod which matches pod's anti-affinity", pod(anti=SCAN),
     pod("other", nominated=N, labels={"service": "securityscan"}), None, Q),
    ("modify pod label to change it from matching only one of target pod's anti-affinity terms to matching none",
     pod(anti=TWO_ANTI), pod("other", node=N, labels={"service": "securityscan", "app": "bar"}),
     pod("other", node=N, labels={"service": "foo", "app": "bar"}), Q),
    ("modify pod label but it still matches one of target pod's anti-affinity terms", pod(anti=TWO_ANTI),
     pod("other", node=N, labels={"service": "securityscan", "app": "bar"}),
     pod("other", node=N, labels={"service": "foo", "app": "web"}), SKIP),
    ("delete a pod which matches only one of target pod's anti-affinity terms", pod(anti=TWO_ANTI),
     pod("other", node=N, labels={"service": "securityscan"}), None, Q),
    ("delete a pod with anti-affinity that matches pending pod on only one term",
     pod(labels={"service": "securityscan"}), pod("other", node=N, anti=TWO_ANTI), None, Q),
]


def _plugin():
    return InterPodAffinity(InterPodAffinityArgs())


@pytest.mark.parametrize("target,old,new,want", [c[1:] for c in ASSIGNED], ids=[c[0] for c in ASSIGNED])
def test_is_schedulable_after_assigned_pod_change(target, old, new, want):
    assert _plugin().is_schedulable_after_assigned_pod_change(target, old, new) == (want, None)


def test_is_schedulable_after_target_pod_update_label():
    p = pod(labels={"foo": "baz"})
    assert _plugin().is_schedulable_after_target_pod_update_label(p, p, p) == (Q, None)


ZONE = [_term("service", "zone", ["securityscan", "value2"])]
REGION = [_term("service", "region", ["securityscan", "value2"])]
ZONE_ANTI = [{"labelSelector": {"matchLabels": {"another": "label"}}, "topologyKey": "zone"}]


def node(labels):
    return make_node("node-a").replace(labels=dict(labels))


NODES = [
    ("add a new node with matched pod affinity topologyKey", pod(affinity=ZONE), None, node({"zone": "zone1"}), Q),
    ("add a new node without matched topologyKey", pod(affinity=REGION), None, node({"zone": "zone1"}), SKIP),
    ("update node label but not topologyKey", pod(affinity=ZONE), node({"aaa": "a"}), node({"aaa": "b"}), SKIP),
    ("update node label that isn't related to the pod affinity", pod(affinity=ZONE), node({"zone": "zone1"}),
     node({"zone": "zone1", "unrelated-label": "unrelated"}), SKIP),
    ("update node with different affinity topologyKey value", pod(affinity=ZONE), node({"zone": "zone1"}),
     node({"zone": "zone2"}), Q),
    ("update node to have the affinity topology label", pod(affinity=ZONE), node({"aaa": "a"}),
     node({"zone": "zone1"}), Q),
    ("add a new node with matched pod anti-affinity topologyKey", pod(anti=ZONE_ANTI), None, node({"zone": "zone1"}), Q),
    ("add a new node without matched pod anti-affinity topologyKey", pod(anti=ZONE_ANTI), None, node({}), Q),
    ("update node label that isn't related to the pod anti-affinity", pod(anti=ZONE_ANTI), node({"zone": "zone1"}),
     node({"zone": "zone1", "unrelated-label": "unrelated"}), SKIP),
    ("update node with different anti-affinity topologyKey value", pod(anti=ZONE_ANTI), node({"zone": "zone1"}),
     node({"zone": "zone2"}), Q),
    ("update node to have the anti-affinity topology label", pod(anti=ZONE_ANTI), node({"aaa": "a"}),
     node({"zone": "zone1"}), SKIP),
    ("update node label not to have anti-affinity topology label", pod(anti=ZONE_ANTI), node({"zone": "zone1"}),
     node({"aaa": "a"}), Q),
]


@pytest.mark.parametrize("target,old,new,want", [c[1:] for c in NODES], ids=[c[0] for c in NODES])
def test_is_schedulable_after_node_change(target, old, new, want):
    assert _plugin().is_schedulable_after_node_change(target, old, new) == (want, None)


def test_events_to_register():
    """Upstream EventsToRegister: AssignedPod Add|UpdatePodLabel|Delete, the pod's own label update
    (TargetPod), Node Add|UpdateNodeLabel, each with its hint; an unscheduled pod's add and another
    unscheduled pod's label update match none of them."""
    regs = _plugin().events_to_register()
    assert all(r.queueing_hint_fn is not None for r in regs)

    def matched(e):
        return any(match_cluster_events(r.event, e) for r in regs)

    assert matched(ClusterEvent(EventResource.ASSIGNED_POD, ActionType.ADD))
    assert matched(ClusterEvent(EventResource.ASSIGNED_POD, ActionType.UPDATE_POD_LABEL))
    assert matched(ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE))
    assert matched(ClusterEvent(EventResource.TARGET_POD, ActionType.UPDATE_POD_LABEL))
    assert not matched(ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.UPDATE_POD_LABEL))
    assert not matched(ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.ADD))
    assert not matched(ClusterEvent(EventResource.ASSIGNED_POD, ActionType.UPDATE_POD_SCALE_DOWN))
    assert matched(ClusterEvent(EventResource.NODE, ActionType.ADD))
    assert not matched(ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_TAINT))
