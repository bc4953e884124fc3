"""Assigned-pod events in the scheduling queue: upstream v1.37.2 calls
``MoveAllToActiveOrBackoffQueue`` for every bound pod added, updated or deleted
(``eventhandlers.go``: ``addAssignedPodToCache``, ``updateAssignedPodInCache``,
``deleteAssignedPodFromCache``), so every unschedulable pod is considered and the rejector
plugins' queueing hints decide (``isPodWorthRequeuing``); there is no pre-filter by
cross-topology terms.

The cases follow ``Test_isPodWorthRequeuing`` and ``TestPriorityQueue_MoveAllToActiveOrBackoffQueue``
(``scheduling_queue_test.go``) with assigned-pod events, plus an out-of-tree plugin registering
AssignedPod/Add, a pod without rejector plugins and ``TestMoveAllToActiveOrBackoffQueuePodGroupMember``
(pod group entities). ``test_candidates_equal_a_full_scan`` checks that the queue's index of
unschedulable pods by rejector plugin moves exactly what a scan of every unschedulable pod moves.
"""
from __future__ import annotations

import random

import pytest

from fastsched.api.objects import PodSchedulingGroup
from fastsched.api.scheduling import GangSchedulingPolicy, PodGroup, PodGroupSchedulingPolicy
from fastsched.clock import VirtualClock
from fastsched.framework import (ActionType, ClusterEvent, ClusterEventWithHint, Code, EventResource, QueueingHint,
                                 Status)
from fastsched.framework.events import EVENT_ASSIGNED_POD_ADD, EVENT_ASSIGNED_POD_DELETE, EVENT_UNSCHEDULABLE_TIMEOUT
from fastsched.plugins.queuesort import PrioritySort
from fastsched.scheduler.backend.queue import PriorityQueue
from fastsched.testing import make_pod

from .test_queue import priority_less, queue_hint, skip_hint  # the queue tests' PrioritySort and hints

PROFILE = "default-scheduler"
ASSIGNED_ADD = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.ADD)
ASSIGNED_LABEL = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.UPDATE_POD_LABEL)
ASSIGNED_SCALE_DOWN = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.UPDATE_POD_SCALE_DOWN)
ASSIGNED_DELETE = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE)
POD_ALL = ClusterEvent(EventResource.POD, ActionType.ALL)
NODE_ADD = ClusterEvent(EventResource.NODE, ActionType.ADD)


def new_queue(hints, *, clock=None, **kw) -> PriorityQueue:
    return PriorityQueue(priority_less, clock or VirtualClock(100.0),
                         queueing_hints={PROFILE: hints} if hints is not None else None, **kw)


def fail(q: PriorityQueue, pod, *, unschedulable=(), pending=()):
    """Add the pod, pop it and put it back rejected by the given plugins (it is the only pod). A pod
    without rejector plugins is parked: add_unschedulable_if_not_present would send it to backoffQ
    (upstream's unschedulablePods can still hold one, e.g. a pod a PreEnqueue plugin stopped gating
    while it waited)."""
    q.add(pod)
    pinfo = q.pop()
    assert pinfo is not None and pinfo.pod.uid == pod.uid
    if not unschedulable and not pending:
        q.park(pinfo, (), ())
    else:
        pinfo.unschedulable_plugins = set(unschedulable)
        pinfo.pending_plugins = set(pending)
        assert q.add_unschedulable_if_not_present(pinfo, q.scheduling_cycle()) is None
    assert q.where(pod.uid) == "unschedulable"
    return pinfo


BOUND = make_pod("bound", labels={"app": "web"}, node_name="node1")
BOUND_RELABELLED = make_pod("bound", labels={"app": "db"}, node_name="node1")


def _add(q):
    q.assigned_pod_added(BOUND)


def _relabel(q):
    q.assigned_pod_updated(BOUND, BOUND_RELABELLED)


# -- isPodWorthRequeuing through the assigned-pod events ------------------------------------------------
# (name, hints {plugin: [(event, hint fn)]}, unschedulable plugins, pending plugins, trigger, expected place)
CASES = [
    ("out-of-tree plugin with a Queue hint for AssignedPod/Add moves the pod to backoffQ",
     {"OutOfTree": [(ASSIGNED_ADD, queue_hint)]}, {"OutOfTree"}, (), _add, "backoff"),
    ("out-of-tree plugin with a QueueSkip hint for AssignedPod/Add keeps the pod",
     {"OutOfTree": [(ASSIGNED_ADD, skip_hint)]}, {"OutOfTree"}, (), _add, "unschedulable"),
    ("a rejector without a registration for AssignedPod/Add keeps the pod",
     {"OutOfTree": [(ASSIGNED_ADD, queue_hint)], "Fit": [(ASSIGNED_DELETE, queue_hint)]}, {"Fit"}, (), _add,
     "unschedulable"),
    ("a registration for AssignedPod/Delete does not match AssignedPod/Add",
     {"Fit": [(ASSIGNED_DELETE, queue_hint)]}, {"Fit"}, (), _add, "unschedulable"),
    ("a Pod/All registration matches AssignedPod/Add",
     {"OutOfTree": [(POD_ALL, queue_hint)]}, {"OutOfTree"}, (), _add, "backoff"),
    ("a nil hint function means Queue",
     {"OutOfTree": [(ASSIGNED_ADD, None)]}, {"OutOfTree"}, (), _add, "backoff"),
    ("Queue from a pending plugin moves the pod to activeQ",
     {"OutOfTree": [(ASSIGNED_ADD, queue_hint)]}, (), {"OutOfTree"}, _add, "active"),
    ("one of two rejectors answering Queue is enough",
     {"A": [(ASSIGNED_ADD, skip_hint)], "B": [(ASSIGNED_ADD, queue_hint)]}, {"A", "B"}, (), _add, "backoff"),
    ("a pod without rejector plugins is queued by any event of interest",
     {"Other": [(ASSIGNED_ADD, skip_hint)]}, (), (), _add, "active"),  # (parked: no failure, no backoff)
    ("an event no plugin registered moves nothing, not even a pod without rejector plugins",
     {"OutOfTree": [(NODE_ADD, queue_hint)]}, (), (), _add, "unschedulable"),
    ("PodTopologySpread's Queue moves a pod of another namespace (the hint decides, no pre-filter)",
     {"PodTopologySpread": [(ClusterEvent(EventResource.ASSIGNED_POD, ActionType.ADD | ActionType.DELETE
                                          | ActionType.UPDATE_POD_LABEL), queue_hint)]},
     {"PodTopologySpread"}, (), _add, "backoff"),
    ("a label update moves the pods whose rejector registered AssignedPod/UpdatePodLabel",
     {"OutOfTree": [(ASSIGNED_LABEL, queue_hint)]}, {"OutOfTree"}, (), _relabel, "backoff"),
    ("a label update does not match a registration for AssignedPod/Add",
     {"OutOfTree": [(ASSIGNED_ADD, queue_hint)]}, {"OutOfTree"}, (), _relabel, "unschedulable"),
    ("a label update on a pod without rejector plugins queues it",
     {"Other": [(ASSIGNED_LABEL, skip_hint)]}, (), (), _relabel, "active"),
]


@pytest.mark.parametrize("hints,unschedulable,pending,trigger,where", [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_assigned_pod_event_hints_decide(hints, unschedulable, pending, trigger, where):
    q = new_queue({name: [ClusterEventWithHint(e, fn) for e, fn in regs] for name, regs in hints.items()})
    pod = make_pod("p", namespace="other")
    fail(q, pod, unschedulable=unschedulable, pending=pending)
    trigger(q)
    assert q.where(pod.uid) == where


def test_profile_without_hint_map_queues_on_assigned_pod_add():
    """isPodWorthRequeuing: no QueueingHintMap for the pod's profile -> queueAfterBackoff."""
    q = PriorityQueue(priority_less, VirtualClock(100.0),
                      queueing_hints={"other-profile": {"X": [ClusterEventWithHint(ASSIGNED_ADD, skip_hint)]}})
    pod = make_pod("p")
    fail(q, pod, unschedulable={"Fit"})
    q.assigned_pod_added(BOUND)
    assert q.where(pod.uid) == "backoff"


def test_update_handles_each_event_of_the_change():
    """updateAssignedPodInCache: each event of PodSchedulingPropertiesChange in turn (a label
    change and a scale-down at once reach both registrations)."""
    hints = {"Labels": [ClusterEventWithHint(ASSIGNED_LABEL, queue_hint)],
             "Fit": [ClusterEventWithHint(ASSIGNED_SCALE_DOWN, queue_hint)],
             "AddOnly": [ClusterEventWithHint(ASSIGNED_ADD, queue_hint)]}
    q = new_queue(hints)
    a, b, c = make_pod("a"), make_pod("b"), make_pod("c")
    fail(q, a, unschedulable={"Labels"})
    fail(q, b, unschedulable={"Fit"})
    fail(q, c, unschedulable={"AddOnly"})
    old = make_pod("bound", labels={"app": "web"}, node_name="node1", cpu="2")
    new = make_pod("bound", labels={"app": "db"}, node_name="node1", cpu="1")
    q.assigned_pod_updated(old, new)
    assert (q.where(a.uid), q.where(b.uid), q.where(c.uid)) == ("backoff", "backoff", "unschedulable")


def test_transcribed_move_all_with_queueing_hint_rows():
    """TestPriorityQueue_MoveAllToActiveOrBackoffQueue's pods, the event an assigned pod's add:
    the two pods rejected by fooPlugin (hint Queue) move, barPlugin's stays; the pod the upstream
    test fails without a plugin goes straight to backoffQ."""
    q = new_queue({"fooPlugin": [ClusterEventWithHint(ASSIGNED_ADD, queue_hint)]})
    unsched = make_pod("unsched", priority=10)
    high = make_pod("high", priority=100)
    hpp2 = make_pod("hpp2", priority=100)
    fail(q, unsched, unschedulable={"fooPlugin"})
    fail(q, high, unschedulable={"fooPlugin"})
    fail(q, hpp2, unschedulable={"barPlugin"})
    q.assigned_pod_added(BOUND)
    assert {p.name for p in q.pods_in_backoff_q()} == {"unsched", "high"}
    assert [p.name for p in q.unschedulable_pods()] == ["hpp2"]


def test_gated_pod_is_reconsidered_only_when_its_gating_plugin_registered_the_event():
    class Gate:
        def __init__(self):
            self.open = False

        def name(self):
            return "OutOfTreeGate"

        def pre_enqueue(self, pod):
            return None if self.open else Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "closed")

    gate = Gate()
    q = PriorityQueue(priority_less, VirtualClock(100.0), pre_enqueue_plugins={PROFILE: [gate]},
                      queueing_hints={PROFILE: {"OutOfTreeGate": [ClusterEventWithHint(ASSIGNED_ADD, queue_hint)]}})
    pod = make_pod("gated")
    q.add(pod)
    assert q.where(pod.uid) == "unschedulable" and q.num_gated() == 1
    q.assigned_pod_added(BOUND)  # PreEnqueue runs again and still gates it
    assert q.where(pod.uid) == "unschedulable" and q.num_gated() == 1
    gate.open = True
    q.assigned_pod_updated(BOUND, BOUND_RELABELLED)  # not registered by the gate: not reconsidered
    assert q.where(pod.uid) == "unschedulable"
    q.assigned_pod_added(BOUND)
    assert q.where(pod.uid) == "active"


def test_event_received_in_flight_is_replayed():
    q = new_queue({"OutOfTree": [ClusterEventWithHint(ASSIGNED_ADD, queue_hint)]})
    pod = make_pod("p")
    q.add(pod)
    pinfo = q.pop()
    q.assigned_pod_added(BOUND)
    pinfo.unschedulable_plugins = {"OutOfTree"}
    assert q.add_unschedulable_if_not_present(pinfo, q.scheduling_cycle()) is None
    assert q.where(pod.uid) == "backoff"


# -- pod group entities: TestMoveAllToActiveOrBackoffQueuePodGroupMember (and GangScheduling) ------------
PG = "pg-test"
PG_KEY = f"podgroup/ns1/{PG}"


class AllowList:
    def name(self):
        return "preEnqueuePlugin"

    def pre_enqueue(self, pod):
        if "allow" in pod.labels:
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "pod label not in allowlists")


def _member(name, allow=True):
    pod = make_pod(name, namespace="ns1", labels={"allow": ""} if allow else None)
    return pod.replace(uid=name, scheduling_group=PodSchedulingGroup(PG))


def _pod1_only(pod, _old, _new):
    return (QueueingHint.QUEUE if pod.name == "pod1" else QueueingHint.QUEUE_SKIP), None


def _group_queue(hints):
    sort = PrioritySort()
    return PriorityQueue(sort.less, VirtualClock(100.0), sort_key=sort.sort_key, generic_workload=True,
                         pre_enqueue_plugins={PROFILE: [AllowList()]}, queueing_hints={PROFILE: hints})


def _setup(q, pods, state):
    q.add_pod_group(PodGroup(name=PG, namespace="ns1",
                             scheduling_policy=PodGroupSchedulingPolicy(gang=GangSchedulingPolicy(1))))
    for pod in pods:
        q.add(pod)
    if state == "popped":
        assert q.pop() is not None
        return
    entity = q._active_q.delete(PG_KEY)
    if entity is None:
        entity = q._unschedulable_pods.get(PG_KEY)
        assert entity is not None
        return
    if state == "gated":
        entity.gating_plugin, entity.gated = "preEnqueuePlugin", True
    q._unschedulable_pods.add(entity, "UnscheduledPodAdd")


GROUP_HINTS = {"preEnqueuePlugin": [ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.ADD), queue_hint)],
               "otherPlugin": [ClusterEventWithHint(NODE_ADD, _pod1_only)]}


@pytest.mark.parametrize("pods,state,event,where,gated,in_flight_event", [
    ([("pod1", True), ("pod2", True)], "unschedulable", NODE_ADD, "active", False, False),
    ([("pod1", True), ("pod2", True)], "unschedulable", ClusterEvent(EventResource.NODE, ActionType.DELETE),
     "unschedulable", False, False),
    ([("pod1", False), ("pod2", True)], "gated", ClusterEvent(EventResource.POD, ActionType.DELETE),
     "unschedulable", True, False),
    ([("pod1", False), ("pod2", True)], "gated", NODE_ADD, "unschedulable", True, False),
    ([("pod1", True), ("pod2", True)], "popped", NODE_ADD, None, False, True),
], ids=["event of interest moves ungated pod group from unschedulableEntities to activeQ",
        "event not of interest keeps pod group in unschedulableEntities",
        "gated pod group not matching gating event stays in unschedulableEntities as gated",
        "gated pod group matching event for ungated pod stays in unschedulableEntities as gated",
        "event received while pod group is in flight is tracked in inFlightEvents"])
def test_move_all_pod_group_member(pods, state, event, where, gated, in_flight_event):
    q = _group_queue(GROUP_HINTS)
    _setup(q, [_member(n, allow) for n, allow in pods], state)
    q.move_all_to_active_or_backoff_queue(event)
    found = None
    for place, container in (("active", q._active_q), ("backoff", q._backoff_q),
                             ("unschedulable", q._unschedulable_pods)):
        entity = container.get(PG_KEY)
        if entity is not None:
            found = (place, entity)
    assert (found[0] if found else None) == where
    if found is not None:
        assert found[1].gated == gated
        assert found[1].size() == 2
    assert bool(q.in_flight_events()) == in_flight_event


def test_pod_group_entity_is_moved_by_an_assigned_pod_add_its_members_hints_accept():
    """GangScheduling registers AssignedPod/Add (isSchedulableAfterPodAdded): an entity whose
    member was rejected by it is considered for every bound pod, the members' hints deciding."""
    seen = []

    def same_group(pod, _old, new):
        seen.append(pod.name)
        group = new.scheduling_group
        same = group is not None and group.pod_group_name == pod.scheduling_group.pod_group_name
        return (QueueingHint.QUEUE if same else QueueingHint.QUEUE_SKIP), None

    q = _group_queue({"GangScheduling": [ClusterEventWithHint(ASSIGNED_ADD, same_group)]})
    _setup(q, [_member("pod1"), _member("pod2")], "unschedulable")
    entity = q._unschedulable_pods.get(PG_KEY)
    for m in entity.pod_infos():
        m.unschedulable_plugins = {"GangScheduling"}
    q.assigned_pod_added(make_pod("other", namespace="ns1", node_name="n1"))
    assert q._unschedulable_pods.get(PG_KEY) is entity and seen
    q.assigned_pod_added(make_pod("pod0", namespace="ns1", node_name="n1").replace(
        scheduling_group=PodSchedulingGroup(PG)))
    assert q._active_q.get(PG_KEY) is entity


# -- the index equals a scan of every unschedulable pod --------------------------------------------------
_PLUGINS = ("A", "B", "C", "D", "Gate")
_EVENTS = [EVENT_ASSIGNED_POD_ADD, ASSIGNED_LABEL, ASSIGNED_SCALE_DOWN, EVENT_ASSIGNED_POD_DELETE, NODE_ADD,
           ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_LABEL), EVENT_UNSCHEDULABLE_TIMEOUT,
           ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.ADD), ClusterEvent("custom.io/Thing", ActionType.ADD)]


def _random_hints(rng, log):
    def hint(name, answer):
        def fn(pod, old, new):
            log.append((name, pod.name))
            return (QueueingHint.QUEUE if answer(pod) else QueueingHint.QUEUE_SKIP), None
        return fn

    hints = {}
    for name in _PLUGINS:
        regs = []
        for event in rng.sample(_EVENTS[:6] + [POD_ALL, _EVENTS[8]], rng.randint(0, 3)):
            salt = rng.random()
            regs.append(ClusterEventWithHint(event, hint(name, lambda pod, s=salt: hash((pod.name, s)) % 3 == 0)))
        hints[name] = regs
    return hints


class _RandomGate:
    def name(self):
        return "Gate"

    def pre_enqueue(self, pod):
        if pod.labels.get("gated") == "yes":
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "gated")
        return None


def _build(seed, full_scan):
    rng = random.Random(seed)
    log = []
    profiles = {PROFILE: _random_hints(rng, log), "second": _random_hints(rng, log)}
    q = PriorityQueue(priority_less, VirtualClock(100.0), queueing_hints=profiles,
                      pre_enqueue_plugins={PROFILE: [_RandomGate()], "second": [_RandomGate()]})
    if full_scan:  # the scan upstream's MoveAll does: every unschedulable pod not gated, the gated
        # ones for a wildcard event or one their gating plugin registered
        q._event_candidates = lambda event, q=q: [
            p for p in q._unschedulable_pods.values()
            if not p.gating_plugin or event.is_wildcard() or q._gating_interested(p.gating_plugin, event, {})]
    for i in range(60):
        pod = make_pod(f"p{i}", priority=rng.randint(0, 3), labels={"gated": "yes"} if rng.random() < 0.1 else None,
                       scheduler_name=rng.choice([PROFILE, "second", "third"]))
        q.add(pod)
        pinfo = q.pop()
        if pinfo is None:
            continue
        n = rng.randint(0, 3)
        q.park(pinfo, rng.sample(_PLUGINS[:4], n), rng.sample(_PLUGINS[:4], rng.randint(0, 1)) if n else ())
        q.clock.advance(0.5)
    return rng, q, log


def _state(q):
    return ([p.name for p in q.pods_in_active_q()], [p.name for p in q.pods_in_backoff_q()],
            [p.name for p in q.unschedulable_pods()])


@pytest.mark.parametrize("seed", range(12))
def test_candidates_equal_a_full_scan(seed):
    rng_a, fast, log_a = _build(seed, False)
    rng_b, scan, log_b = _build(seed, True)
    for step in range(30):
        event = rng_a.choice(_EVENTS)
        assert rng_b.choice(_EVENTS) is event
        bound = make_pod(f"b{step}", labels={"app": str(step % 3)}, node_name="n1")
        if event is EVENT_UNSCHEDULABLE_TIMEOUT:
            for q in (fast, scan):
                q.clock.advance(400.0)
                q.flush_unschedulable_pods_leftover()
        else:
            for q in (fast, scan):
                q.move_all_to_active_or_backoff_queue(event, None, bound)
        assert _state(fast) == _state(scan)
        assert log_a == log_b
        # put some pods back so that the next events find them
        for q, rng in ((fast, rng_a), (scan, rng_b)):
            pinfo = q.pop()
            if pinfo is not None:
                q.park(pinfo, rng.sample(_PLUGINS[:4], rng.randint(0, 2)), ())
    assert _state(fast) == _state(scan) and log_a == log_b
