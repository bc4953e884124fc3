"""The Scheduler's event handlers against upstream v1.37.2 ``eventhandlers.go``: which events reach
the queue, with which pre-checks, after or before the cache.

Transcribed: ``TestNodeSchedulingPropertiesChange`` (``framework/events_test.go``) and
``TestEventHandlers_MoveToActiveOnNominatedNodeUpdate`` (``eventhandlers_test.go``); the other
cases follow ``updateNodeInCache``, ``deleteNodeFromCache``, ``updatePod`` (a bound pod's update,
a binding by another component) and ``updatePodInSchedulingQueue`` (an assumed pod).
"""
from __future__ import annotations

import pytest

from fastsched.api.objects import Taint
from fastsched.clock import VirtualClock
from fastsched.framework import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from fastsched.framework.events import EVENT_ASSIGNED_POD_DELETE, node_scheduling_properties_change
from fastsched.scheduler.backend.queue import PriorityQueue
from fastsched.scheduler.eventhandlers import EventHandlersMixin
from fastsched.testing import make_node, make_pod

SCHED = "test-scheduler"


def node(**kw):
    labels = kw.pop("labels", None)
    n = make_node("node-a", **kw)
    return n.replace(labels=dict(labels)) if labels is not None else n


T1 = (Taint(key="node.kubernetes.io/unschedulable", value="", effect="NoSchedule"),)
T2 = (Taint(key="node.kubernetes.io/unschedulable", value="foo", effect="NoSchedule"),)


def _ev(*actions):
    return [ClusterEvent(EventResource.NODE, a) for a in actions]


# -- TestNodeSchedulingPropertiesChange ----------------------------------------------------------------
@pytest.mark.parametrize("new,old,want", [
    (node(), node(), []),
    (node(), node(unschedulable=True), _ev(ActionType.UPDATE_NODE_TAINT)),
    (node(extra={"example.com/foo": "1"}), node(extra={"example.com/foo": "2"}), _ev(ActionType.UPDATE_NODE_ALLOCATABLE)),
    (node(labels={"foo": "bar"}), node(labels={"foo": "fuz"}), _ev(ActionType.UPDATE_NODE_LABEL)),
    (node().replace(taints=T1), node().replace(taints=T2), _ev(ActionType.UPDATE_NODE_TAINT)),
    (node().replace(annotations={"foo": "bar"}), node().replace(annotations={"foo": "fuz"}),
     _ev(ActionType.UPDATE_NODE_ANNOTATION)),
    (node(labels={"foo": "bar"}).replace(taints=T1), node().replace(labels={}, taints=T2),
     _ev(ActionType.UPDATE_NODE_LABEL, ActionType.UPDATE_NODE_TAINT)),
    # not in upstream's table: the node made unschedulable is no event (only the way back is)
    (node(unschedulable=True), node(), []),
], ids=["no specific changed applied", "only node spec unavailable changed", "only node allocatable changed",
        "only node label changed", "only node taint changed", "only node annotation changed",
        "both node label and node taint changed", "node made unschedulable"])
def test_node_scheduling_properties_change(new, old, want):
    got = node_scheduling_properties_change(new, old)
    assert got == want
    # the same event objects each time (the queue memoizes its answers per event object)
    assert all(a is b for a, b in zip(got, node_scheduling_properties_change(new, old)))


# -- a harness: the handlers with a real queue and a cache that records what it is told -------------------
class FakeCache:
    generic_workload = False

    def __init__(self, log):
        self.log = log
        self.assumed: set[str] = set()
        self.pods: dict[str, object] = {}

    def update_node(self, node):
        self.log.append(("cache", "update_node"))

    def remove_node(self, name):
        self.log.append(("cache", "remove_node"))

    def add_pod(self, pod):
        self.pods[pod.uid] = pod
        self.log.append(("cache", "add_pod"))

    def update_pod(self, old, new):
        self.pods[new.uid] = new
        self.log.append(("cache", "update_pod"))

    def remove_pod(self, pod):
        self.pods.pop(pod.uid, None)

    def remove_confirmed_pod(self, pod):
        if pod.uid in self.pods and pod.uid not in self.assumed:
            self.remove_pod(pod)

    def forget_pod(self, pod):
        assert pod.uid in self.assumed, "only an assumed pod is forgotten"
        self.pods.pop(pod.uid, None)
        self.assumed.discard(pod.uid)
        self.log.append(("cache", "forget_pod"))

    def get_pod(self, pod):
        return self.pods.get(pod.uid)

    def is_assumed_pod(self, pod):
        return pod.uid in self.assumed

    def update_pod_group_member(self, old, new):
        pass

    def remove_pod_group_member(self, pod):
        pass


class Handlers(EventHandlersMixin):
    def __init__(self, hints, **queue_kw):
        self.log = []
        self.cache = FakeCache(self.log)
        self.queue = PriorityQueue(lambda a, b: a.pod.effective_priority > b.pod.effective_priority,
                                   VirtualClock(100.0), queueing_hints={SCHED: hints}, **queue_kw)
        self.profiles = {SCHED: object()}
        self.results = {}
        self._change_seq = 0

    def unschedulable(self, pod, *plugins):
        self.queue.add(pod)
        pinfo = self.queue.pop()
        assert pinfo.pod.uid == pod.uid
        pinfo.unschedulable_plugins = set(plugins)
        assert self.queue.add_unschedulable_if_not_present(pinfo, self.queue.scheduling_cycle()) is None

    def moved(self):
        return {p.name for p in self.queue.pods_in_active_q() + self.queue.pods_in_backoff_q()}


def pod(name, priority=0, **kw):
    return make_pod(name, uid=name, priority=priority, scheduler_name=SCHED, **kw)


# -- TestEventHandlers_MoveToActiveOnNominatedNodeUpdate -------------------------------------------------
HIGH, MID, LOW = 100, 50, 10


def _pods():
    high = pod("hpp", HIGH, namespace="ns1")
    med_nominated = pod("mpp", MID, namespace="ns2").replace(nominated_node_name="node1")
    med = pod("smpp", MID, namespace="ns3")
    low = pod("lpp", LOW, namespace="ns4")
    return high, med_nominated, med, low


def _hint_for_pod_delete(_pod, old, _new):
    return (QueueingHint.QUEUE_SKIP if not old.nominated_node_name else QueueingHint.QUEUE), None


@pytest.mark.parametrize("action,want", [
    ("nnn-changed", {"lpp", "smpp", "mpp"}),
    ("nnn-removed", {"lpp", "smpp", "mpp"}),
    ("delete-nominated", {"lpp", "smpp"}),
    ("nnn-added-to-high", set()),
], ids=["Update of a nominated node name to a different value should trigger rescheduling of lower priority pods",
        "Removal of a nominated node name should trigger rescheduling of lower priority pods",
        "Removal of a pod that had nominated node name should trigger rescheduling of lower priority pods",
        "Addition of a nominated node name to the high priority pod that did not have it before shouldn't "
        "trigger rescheduling"])
@pytest.mark.parametrize("path", ["update", "status"])
def test_move_to_active_on_nominated_node_update(action, want, path):
    h = Handlers({"fooPlugin1": [ClusterEventWithHint(EVENT_ASSIGNED_POD_DELETE, _hint_for_pod_delete)]},
                 pod_initial_backoff=0.0, pod_max_backoff=0.0)
    high, med_nominated, med, low = _pods()
    for p in (high, med_nominated, med, low):
        h.unschedulable(p, "fooPlugin1")
    assert h.moved() == set()
    update = h.on_pod_update if path == "update" else h.on_pod_status_update
    if action == "nnn-changed":
        update(med_nominated, med_nominated.replace(nominated_node_name="node2"))
    elif action == "nnn-removed":
        update(med_nominated, med_nominated.replace(nominated_node_name=""))
    elif action == "delete-nominated":
        h.on_pod_delete(med_nominated, "")
    else:
        update(high, high.replace(nominated_node_name="node2"))
    assert h.moved() == want


# -- updateNodeInCache / deleteNodeFromCache -------------------------------------------------------------
def test_node_update_moves_pods_by_each_event_of_the_change():
    """A label and a taint changed at once: a plugin registered for UpdateNodeLabel alone is asked
    (one event per change; an event carrying both would not match its registration)."""
    h = Handlers({"NodeAffinity": [ClusterEventWithHint(ClusterEvent(EventResource.NODE,
                                                                       ActionType.ADD | ActionType.UPDATE_NODE_LABEL))]})
    p = pod("p")
    h.unschedulable(p, "NodeAffinity")
    h.on_node_update(node().replace(labels={}, taints=T2), node(labels={"zone": "a"}).replace(taints=T1))
    assert h.moved() == {"p"}


def test_node_update_without_a_scheduling_change_sends_no_event():
    h = Handlers({"X": [ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.UPDATE))]})
    p = pod("p")
    h.unschedulable(p, "X")
    h.on_node_update(node(), node(images=[("busybox", 10)]))
    assert h.moved() == set()
    h.on_node_update(node(), node(unschedulable=True))  # made unschedulable: no event either
    assert h.moved() == set()
    h.on_node_update(node(unschedulable=True), node())  # made schedulable: UpdateNodeTaint
    assert h.moved() == {"p"}


def test_node_delete_moves_pods_before_the_cache_forgets_the_node():
    order = []

    class Recording(Handlers):
        pass

    def hint(_pod, _old, _new):
        order.append(("queue", "hint"))
        return QueueingHint.QUEUE, None

    h = Recording({"X": [ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.DELETE), hint)]})
    h.log = order
    h.cache.log = order
    h.unschedulable(pod("p"), "X")
    h.on_node_delete(node())
    assert order == [("queue", "hint"), ("cache", "remove_node")]


# -- updatePod ---------------------------------------------------------------------------------------------
def test_bound_pod_update_sends_each_event_of_the_change():
    """updateAssignedPodInCache: PodSchedulingPropertiesChange's events (here AssignedPod/UpdatePodLabel),
    not one generic Update a registration for a label change does not match."""
    h = Handlers({"PodTopologySpread": [ClusterEventWithHint(ClusterEvent(
        EventResource.POD, ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE))]})
    p = pod("p")
    h.unschedulable(p, "PodTopologySpread")
    old = pod("bound", labels={"app": "a"}, node_name="n1")
    h.on_pod_update(old, old.replace(labels={"app": "b"}))
    assert h.log == [("cache", "update_pod")]
    assert h.moved() == {"p"}


def test_binding_by_another_component():
    """updatePod: not bound before, bound now: addAssignedPodToCache (cache, then AssignedPodAdd),
    then deletePodFromSchedulingQueue(inBinding=true)."""
    h = Handlers({"X": [ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD, ActionType.ADD))]})
    waiting, bound_elsewhere = pod("waiting"), pod("elsewhere")
    h.unschedulable(waiting, "X")
    h.queue.add(bound_elsewhere)
    h.on_pod_update(bound_elsewhere, bound_elsewhere.replace(node_name="n1"))
    assert h.cache.get_pod(bound_elsewhere) is not None
    assert not h.queue.has(bound_elsewhere.uid)
    assert h.moved() == {"waiting"}


def test_assumed_pod_update_leaves_the_queue_alone():
    """updatePodInSchedulingQueue returns for an assumed pod (its binding cycle owns it)."""
    h = Handlers({})
    p = pod("assumed")
    h.cache.assumed.add(p.uid)
    h.on_pod_update(p, p.replace(labels={"x": "y"}))
    assert not h.queue.has(p.uid)


# -- TestUpdatePod (the rows without pod groups or deferred resizes) ------------------------------------------
class _Profile:
    """A profile's framework as far as handleAssumedPodDeletion uses it: its waiting pods."""

    def __init__(self, waiting):
        self.waiting, self.rejected = set(waiting), []

    def reject_waiting_pod(self, uid):
        if uid not in self.waiting:
            return False
        self.waiting.discard(uid)
        self.rejected.append(uid)
        return True


@pytest.mark.parametrize("old,assumed,new,waiting_on_permit,in_queue,in_cache", [
    ("pod", None, "updatedPod", False, True, None),
    ("otherPod", None, "updatedOtherPod", False, False, None),
    ("pod", "scheduledPod", "updatedPod", False, False, "scheduledPod"),
    ("scheduledPod", None, "updatedScheduledPod", False, False, "updatedScheduledPod"),
    ("otherScheduledPod", None, "updatedOtherScheduledPod", False, False, "updatedOtherScheduledPod"),
    ("pod", None, "scheduledPod", False, False, "scheduledPod"),
    ("otherPod", None, "otherScheduledPod", False, False, "otherScheduledPod"),
    ("pod", "scheduledPod", "podWithDeletionTimestamp", False, False, None),
    ("pod", "scheduledPod", "podWithDeletionTimestamp", True, False, "scheduledPod"),
], ids=["update unscheduled pod", "update unscheduled pod with other scheduler name", "update assumed pod",
        "update scheduled pod", "update scheduled pod with other scheduler name", "bind unscheduled pod",
        "bind unscheduled pod with other scheduler name", "update assumed pod with deletion timestamp",
        "update assumed pod waiting on permit with deletion timestamp"])
def test_update_pod(old, assumed, new, waiting_on_permit, in_queue, in_cache):
    base = make_pod("pod1", namespace="ns1", uid="pod1", scheduler_name=SCHED)
    other = base.replace(scheduler_name="other-scheduler")
    pods = {
        "pod": base, "updatedPod": base.replace(labels={"foo": "bar"}),
        "otherPod": other, "updatedOtherPod": other.replace(labels={"foo": "bar"}),
        "scheduledPod": base.replace(node_name="node1"),
        "updatedScheduledPod": base.replace(node_name="node1", labels={"foo": "bar"}),
        "otherScheduledPod": other.replace(node_name="node1"),
        "updatedOtherScheduledPod": other.replace(node_name="node1", labels={"foo": "bar"}),
        "podWithDeletionTimestamp": base.replace(deletion_timestamp=1.0),
    }
    h = Handlers({})
    profile = h.profiles[SCHED] = _Profile({"pod1"} if waiting_on_permit else ())
    if pods[old].node_name:
        h.cache.add_pod(pods[old])
    if assumed is not None:
        h.cache.add_pod(pods[assumed])
        h.cache.assumed.add(pods[assumed].uid)
    h.on_pod_update(pods[old], pods[new])
    assert h.queue.has("pod1") == in_queue
    if in_queue:
        assert h.queue.get("pod1").pod is pods[new]
    assert h.cache.pods.get("pod1") is (pods[in_cache] if in_cache else None)
    # handleAssumedPodDeletion: a pod waiting at Permit is rejected (its binding cycle forgets it)
    assert profile.rejected == (["pod1"] if waiting_on_permit else [])


def test_an_assumed_pods_deletion_moves_the_pods_waiting_for_room():
    """handleAssumedPodDeletion ends with MoveAllToActiveOrBackoffQueue(AssignedPodDelete) of the
    cache's copy (on its node), whether the pod was waiting at Permit or not."""
    seen = []

    def hint(_pod, old, _new):
        seen.append(old.node_name)
        return QueueingHint.QUEUE, None

    for waiting in (False, True):
        seen.clear()
        h = Handlers({"fooPlugin1": [ClusterEventWithHint(EVENT_ASSIGNED_POD_DELETE, hint)]},
                     pod_initial_backoff=0.0, pod_max_backoff=0.0)
        h.profiles[SCHED] = _Profile({"a"} if waiting else ())
        h.unschedulable(pod("waiter"), "fooPlugin1")
        assumed = pod("a").replace(node_name="node1")
        h.cache.add_pod(assumed)
        h.cache.assumed.add("a")
        h.on_pod_update(pod("a"), pod("a").replace(deletion_timestamp=1.0))
        assert h.moved() == {"waiter"} and seen == ["node1"]
        # a second update of the terminating pod does nothing more (the deletion had started)
        h.on_pod_update(pod("a").replace(deletion_timestamp=1.0), pod("a").replace(deletion_timestamp=1.0,
                                                                                  labels={"x": "y"}))
        assert seen == ["node1"]


def test_deleting_another_schedulers_nominated_pod_moves_nothing():
    """deletePod: deletePodFromSchedulingQueue only for a pod the scheduler is responsible for."""
    h = Handlers({"fooPlugin1": [ClusterEventWithHint(EVENT_ASSIGNED_POD_DELETE, _hint_for_pod_delete)]},
                 pod_initial_backoff=0.0, pod_max_backoff=0.0)
    low = pod("lpp", LOW)
    h.unschedulable(low, "fooPlugin1")
    foreign = make_pod("foreign", uid="foreign", priority=MID, scheduler_name="other").replace(
        nominated_node_name="node1")
    h.on_pod_delete(foreign, "")
    assert h.moved() == set()
    h.on_pod_delete(foreign.replace(scheduler_name=SCHED), "")
    assert h.moved() == {"lpp"}


# -- TestNodeConditionsChange (events_test.go): conditions are read from the node's manifest ---------
def _conditioned(*conditions):
    from fastsched.api.objects import Node

    return Node.from_manifest({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-a"},
                               "status": {"conditions": [dict(c) for c in conditions]}})


DISK = {"type": "DiskPressure", "status": "True"}


@pytest.mark.parametrize("old,new,changed", [
    ([DISK], [DISK], False),
    ([{**DISK, "lastHeartbeatTime": "1970-01-01T00:00:01Z"}], [{**DISK, "lastHeartbeatTime": "1970-01-01T00:00:02Z"}],
     False),
    ([], [{"type": "Ready", "status": "True"}], True),
    ([DISK], [], True),
    ([{"type": "Ready", "status": "False"}], [{"type": "Ready", "status": "True"}], True),
], ids=["no condition changed", "only LastHeartbeatTime changed", "new node has more healthy conditions",
        "new node has less unhealthy conditions", "condition status changed"])
def test_node_conditions_change(old, new, changed):
    """A condition's status changed is UpdateNodeCondition (between taints and annotations in
    NodeSchedulingPropertiesChange's order); a heartbeat alone is none. The class ``hints`` found
    it missing (a Ready flip was no event)."""
    got = node_scheduling_properties_change(_conditioned(*new), _conditioned(*old))
    assert got == (_ev(ActionType.UPDATE_NODE_CONDITION) if changed else [])
    both = _conditioned(*new).replace(labels={"foo": "bar"}, annotations={"a": "b"})
    if changed:
        assert node_scheduling_properties_change(both, _conditioned(*old)) == _ev(
            ActionType.UPDATE_NODE_LABEL, ActionType.UPDATE_NODE_CONDITION, ActionType.UPDATE_NODE_ANNOTATION)
