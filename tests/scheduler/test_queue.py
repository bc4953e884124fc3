"""PriorityQueue: upstream v1.34 scheduling-queue semantics, driven by a virtual clock.

Several cases follow upstream's ``scheduling_queue_test.go`` (TestPriorityQueue_Add/Pop/Update/
Delete/Activate, TestBackOffFlow, TestHighPriorityFlushUnschedulablePodsLeftover,
Test_isPodWorthRequeuing, TestPriorityQueue_PendingPods).
"""
from __future__ import annotations

import random

import pytest

from fastsched.clock import VirtualClock
from fastsched.framework import (ActionType, ClusterEvent, ClusterEventWithHint, Code, EventResource, QueueingHint,
                                 Status)
from fastsched.framework.events import (EVENT_FORCE_ACTIVATE, EVENT_UNSCHEDULABLE_TIMEOUT, event_label,
                                        match_cluster_events, pod_scheduling_properties_change)
from fastsched.framework.types import NominatingInfo, NominatingMode, PodInfo
from fastsched.scheduler.backend.heap import Heap, KeyedHeap
from fastsched.scheduler.backend.queue import PriorityQueue, QueueError
from fastsched.testing import make_pod

NODE_ADD = ClusterEvent(EventResource.NODE, ActionType.ADD)
NODE_UPDATE = ClusterEvent(EventResource.NODE, ActionType.UPDATE)
NODE_LABEL = ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_LABEL)
NODE_ALLOCATABLE = ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_ALLOCATABLE)
GATES_ELIMINATED = ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)


def priority_less(a, b) -> bool:
    """PrioritySort: higher priority first, then the earlier timestamp."""
    pa, pb = a.pod.effective_priority, b.pod.effective_priority
    return pa > pb or (pa == pb and a.timestamp < b.timestamp)


def queue_hint(_pod, _old, _new):
    return QueueingHint.QUEUE, None


def skip_hint(_pod, _old, _new):
    return QueueingHint.QUEUE_SKIP, None


class Gate:
    """A PreEnqueue plugin that gates pods with scheduling gates (like SchedulingGates)."""

    def __init__(self, name: str = "Gate"):
        self._name = name
        self.calls = 0

    def name(self) -> str:
        return self._name

    def pre_enqueue(self, pod):
        self.calls += 1
        if pod.scheduling_gates:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "waiting for scheduling gates")
        return None


def new_queue(clock=None, *, hints=None, gate=None, **kw) -> PriorityQueue:
    profile = "default-scheduler"
    pre = {profile: [gate]} if gate is not None else {}
    q = PriorityQueue(priority_less, clock if clock is not None else VirtualClock(100.0),
                      pre_enqueue_plugins=pre, queueing_hints={profile: hints or {}}, **kw)
    return q


def fail(q: PriorityQueue, pod_uid: str, *, unschedulable=(), pending=()):
    """Pop the pod (it must be the head) and put it back as rejected by the given plugins."""
    pinfo = q.pop()
    assert pinfo is not None and pinfo.pod.uid == pod_uid
    pinfo.unschedulable_plugins = set(unschedulable)
    pinfo.pending_plugins = set(pending)
    assert q.add_unschedulable_if_not_present(pinfo, q.scheduling_cycle()) is None
    return pinfo


# ------------------------------------------------------------------------------------------------
# activeQ ordering and pop
# ------------------------------------------------------------------------------------------------
def test_pop_order_priority_then_timestamp_and_pop_bookkeeping():
    clock = VirtualClock(100.0)
    q = new_queue(clock)
    low = make_pod("low", priority=1)
    high = make_pod("high", priority=100)
    mid_early = make_pod("mid-early", priority=10)
    mid_late = make_pod("mid-late", priority=10)
    q.add(low)
    clock.advance(1)
    q.add(mid_early)
    clock.advance(1)
    q.add(high)
    clock.advance(1)
    q.add(mid_late)
    assert (q.num_active(), len(q)) == (4, 4)
    assert [p.name for p in q.pods_in_active_q()] == ["high", "mid-early", "mid-late", "low"]

    clock.advance(5)
    names = []
    for cycle in range(1, 5):
        pinfo = q.pop()
        names.append(pinfo.pod.name)
        assert pinfo.attempts == 1
        assert q.scheduling_cycle() == cycle
        assert q.in_flight(pinfo.pod.uid) and not q.has(pinfo.pod.uid)
        # initial_attempt_timestamp is when the pod first entered activeQ
        assert pinfo.initial_attempt_timestamp == pinfo.timestamp
    assert names == ["high", "mid-early", "mid-late", "low"]
    assert q.pop() is None
    assert q.scheduling_cycle() == 4


def test_pop_clears_rejector_plugins_and_done_is_idempotent():
    q = new_queue()
    pod = make_pod("p")
    q.add(pod)
    pinfo = fail(q, pod.uid, unschedulable={"Fit"})
    assert q.where(pod.uid) == "unschedulable"
    q.activate([pod])
    again = q.pop()
    assert again is pinfo and again.attempts == 2
    assert again.unschedulable_plugins == set() and again.pending_plugins == set()
    q.done(pod.uid)
    q.done(pod.uid)
    assert not q.in_flight(pod.uid)


def test_add_unschedulable_if_not_present_rejects_queued_pods():
    q = new_queue()
    pod = make_pod("p")
    q.add(pod)
    pinfo = q.get(pod.uid)
    err = q.add_unschedulable_if_not_present(pinfo, q.scheduling_cycle())
    assert isinstance(err, QueueError) and "already present in the active queue" in str(err)
    assert q.where(pod.uid) == "active"


# ------------------------------------------------------------------------------------------------
# Backoff
# ------------------------------------------------------------------------------------------------
def test_backoff_flow_doubles_and_caps_with_ordering_windows():
    """TestBackOffFlow: errors (no rejector plugin) back off 1, 2, 4, 8, 10, 10 s in the error queue."""
    clock = VirtualClock(100.0)
    q = new_queue(clock)
    pod = make_pod("p")
    q.add(pod)
    for i, want in enumerate([1, 2, 4, 8, 10, 10, 10]):
        clock.advance(0.25)
        failed_at = clock.now()
        pinfo = q.pop()
        assert pinfo.attempts == i + 1
        assert q.add_unschedulable_if_not_present(pinfo, q.scheduling_cycle()) is None
        assert (pinfo.consecutive_errors_count, pinfo.unschedulable_count) == (i + 1, 0)
        assert pinfo.timestamp == failed_at
        assert q.backoff_duration(pinfo) == want
        assert q.where(pod.uid) == "backoff" and q.num_error_backoff() == 1
        # Expirations are truncated to whole seconds and a window completes when the next begins.
        done_at = int(failed_at + want) + 1
        assert q.backoff_expiration(pinfo) == done_at
        assert q.next_wakeup() == done_at
        clock.advance_to(done_at - 0.001)
        assert q.is_backing_off(pinfo)
        assert q.flush_backoff_q_completed() == 0
        clock.advance_to(done_at)
        assert not q.is_backing_off(pinfo)
        assert q.flush_backoff_q_completed() == 1
        assert q.where(pod.uid) == "active"


def test_backoff_counts_failures_by_kind():
    """UnschedulableCount and ConsecutiveErrorsCount are separate; an unschedulable failure resets errors."""
    q = new_queue(hints={"Fit": [ClusterEventWithHint(NODE_ADD, queue_hint)]})
    pod = make_pod("p")
    q.add(pod)
    pinfo = fail(q, pod.uid)  # error
    q.activate([pod])
    fail(q, pod.uid)  # error
    assert (pinfo.consecutive_errors_count, pinfo.unschedulable_count) == (2, 0)
    assert q.backoff_duration(pinfo) == 2
    q.activate([pod])
    fail(q, pod.uid, unschedulable={"Fit"})
    assert (pinfo.consecutive_errors_count, pinfo.unschedulable_count) == (0, 1)
    assert q.backoff_duration(pinfo) == 1
    assert pinfo.attempts == 3


def test_pod_max_backoff_zero_disables_backoff():
    clock = VirtualClock(100.0)
    q = new_queue(clock, pod_max_backoff=0.0, hints={"Fit": [ClusterEventWithHint(NODE_ADD, queue_hint)]})
    pod = make_pod("p")
    q.add(pod)
    pinfo = fail(q, pod.uid)  # an error: queued after backoff, but there is none
    assert q.backoff_duration(pinfo) == 0 and not q.is_backing_off(pinfo)
    assert q.where(pod.uid) == "active"
    fail(q, pod.uid, unschedulable={"Fit"})
    assert q.where(pod.uid) == "unschedulable"
    q.move_all_to_active_or_backoff_queue(NODE_ADD)
    assert q.where(pod.uid) == "active"


def test_backoff_wait_uses_ordering_window_disabled_without_pop_from_backoff_q():
    clock = VirtualClock(100.3)
    q = new_queue(clock, pop_from_backoff_q=False)
    pod = make_pod("p")
    q.add(pod)
    pinfo = fail(q, pod.uid)
    assert q.backoff_expiration(pinfo) == pytest.approx(101.3)
    assert q.pop() is None  # no popping from backoffQ
    clock.advance_to(101.3)
    assert q.flush_backoff_q_completed() == 1


def test_error_and_unschedulable_backoff_queues_and_pop_from_backoff_q():
    clock = VirtualClock(100.0)
    q = new_queue(clock, hints={"Fit": [ClusterEventWithHint(NODE_ADD, queue_hint)]})
    err_pod, unsched_pod = make_pod("err", priority=5), make_pod("unsched", priority=1)
    q.add(err_pod)
    q.add(unsched_pod)
    fail(q, err_pod.uid)
    # an event while the second pod is in flight sends it to backoffQ when it fails
    popped = q.pop()
    q.move_all_to_active_or_backoff_queue(NODE_ADD)
    popped.unschedulable_plugins = {"Fit"}
    q.add_unschedulable_if_not_present(popped, q.scheduling_cycle())
    assert q.num_backoff() == 2 and q.num_error_backoff() == 1
    assert [p.name for p in q.pods_in_backoff_q()] == ["unsched", "err"]
    # activeQ is empty: pop takes podBackoffQ's head although it is still backing off...
    assert q.is_backing_off(popped)
    assert q.pop().pod.name == "unsched"
    # ...but never the error queue's
    assert q.pop() is None
    assert q.where(err_pod.uid) == "backoff"


@pytest.mark.parametrize("windows, want", [(True, ["high", "low"]), (False, ["low", "high"])])
def test_backoff_q_orders_same_window_by_priority(windows, want):
    """With ordering windows, pods expiring in the same second are ordered by QueueSort."""
    clock = VirtualClock(100.0)
    q = new_queue(clock, pop_from_backoff_q=windows, hints={"Fit": [ClusterEventWithHint(NODE_ADD, queue_hint)]})
    low, high = make_pod("low", priority=1), make_pod("high", priority=9)
    q.add(low)
    fail(q, low.uid, unschedulable={"Fit"})   # expires at 101.0
    clock.advance(0.5)
    q.add(high)
    fail(q, high.uid, unschedulable={"Fit"})  # expires at 101.5: same window [101, 102)
    q.move_all_to_active_or_backoff_queue(NODE_ADD)
    assert [p.name for p in q.pods_in_backoff_q()] == want
    if windows:
        assert q.pop().pod.name == "high"


# ------------------------------------------------------------------------------------------------
# Gated pods
# ------------------------------------------------------------------------------------------------
def test_gated_pod_kept_out_until_gates_removed_by_update():
    gate = Gate()
    q = new_queue(gate=gate, hints={"Gate": [ClusterEventWithHint(GATES_ELIMINATED, queue_hint)],
                                    "Fit": [ClusterEventWithHint(NODE_ADD, queue_hint)]})
    gated = make_pod("gated", schedulingGates=[{"name": "example.com/wait"}])
    q.add(gated)
    pinfo = q.get(gated.uid)
    assert q.where(gated.uid) == "unschedulable"
    assert pinfo.gated and pinfo.gating_plugin == "Gate" and pinfo.unschedulable_plugins == {"Gate"}
    assert pinfo.initial_attempt_timestamp is None and q.num_gated() == 1
    assert q.pop() is None
    # events the gating plugin did not register never move it
    calls = gate.calls
    q.move_all_to_active_or_backoff_queue(NODE_ADD)
    assert gate.calls == calls and q.where(gated.uid) == "unschedulable"
    # the wildcard timeout re-checks it (v1.37.2 flushUnschedulableEntitiesLeftover): PreEnqueue
    # runs again and keeps it gated; the next re-check is due 5 minutes after this flush (t=401),
    # on the first 30 s tick past t=701
    q.clock.advance(301)
    q.flush_unschedulable_pods_leftover()
    assert gate.calls == calls + 1
    assert q.where(gated.uid) == "unschedulable" and q.get(gated.uid).flush_timestamp == 401.0
    assert not q.get(gated.uid).was_flushed_from_unschedulable
    assert q.next_wakeup() == 730.0
    # an update that keeps a gate keeps it gated
    relabelled = gated.replace(labels={"a": "b"})
    q.update(gated, relabelled)
    assert q.where(gated.uid) == "unschedulable" and q.get(gated.uid).pod is relabelled
    # removing the gates re-runs PreEnqueue and releases it
    calls = gate.calls
    released = relabelled.replace(scheduling_gates=())
    q.update(relabelled, released)
    assert gate.calls > calls
    assert q.where(gated.uid) == "active"
    assert not pinfo.gated and pinfo.gating_plugin == ""
    assert q.pop().pod is released


def test_gated_pod_moves_only_for_events_of_its_gating_plugin():
    class Flag:
        open = False

        def name(self):
            return "Flag"

        def pre_enqueue(self, pod):
            return None if self.open else Status(Code.UNSCHEDULABLE, "closed")

    flag = Flag()
    q = PriorityQueue(priority_less, VirtualClock(), pre_enqueue_plugins={"default-scheduler": [flag]},
                      queueing_hints={"default-scheduler": {"Flag": [ClusterEventWithHint(NODE_LABEL, None)],
                                                            "Fit": [ClusterEventWithHint(NODE_ADD, None)]}})
    pod = make_pod("p")
    q.add(pod)
    assert q.get(pod.uid).gating_plugin == "Flag"
    flag.open = True
    q.move_all_to_active_or_backoff_queue(NODE_ADD)    # registered by Fit only
    assert q.where(pod.uid) == "unschedulable"
    q.move_all_to_active_or_backoff_queue(NODE_LABEL)  # registered by the gating plugin
    assert q.where(pod.uid) == "active"


def test_gated_pod_stays_gated_while_pre_enqueue_fails():
    class Flag:
        open = False

        def name(self):
            return "Flag"

        def pre_enqueue(self, pod):
            return None if self.open else Status(Code.UNSCHEDULABLE, "closed")

    flag = Flag()
    q = PriorityQueue(priority_less, VirtualClock(), pre_enqueue_plugins={"default-scheduler": [flag]},
                      queueing_hints={"default-scheduler": {"Flag": [ClusterEventWithHint(NODE_LABEL, None)]}})
    pod = make_pod("p")
    q.add(pod)
    q.move_all_to_active_or_backoff_queue(NODE_LABEL)
    assert q.where(pod.uid) == "unschedulable" and q.get(pod.uid).gated


def test_crashing_pre_enqueue_plugin_gates_the_pod_with_its_error():
    """A PreEnqueue plugin that raises (the queue's plugins may be bare, not the framework's
    checked wrappers) gates the pod as an Error status would, with the exception's text; the
    plugins after it are not asked."""
    class Crash:
        def name(self):
            return "Crash"

        def pre_enqueue(self, pod):
            raise RuntimeError("boom")

    class After:
        asked = 0

        def name(self):
            return "After"

        def pre_enqueue(self, pod):
            self.asked += 1

    after = After()
    q = PriorityQueue(priority_less, VirtualClock(), pre_enqueue_plugins={"default-scheduler": [Crash(), after]})
    pod = make_pod("p")
    q.add(pod)
    info = q.get(pod.uid)
    assert (info.gated, info.gating_plugin, info.gating_message) == (True, "Crash", "boom")
    assert q.where(pod.uid) == "unschedulable" and after.asked == 0


def test_unschedulable_pods_index_by_gating_plugin_follows_the_map():
    """The gating-plugin groups partition the map, each in the map's order, through random adds,
    replacements, regroupings and pops (the order an event's candidates are moved in)."""
    import random

    from fastsched.framework.types import QueuedPodInfo
    from fastsched.scheduler.backend.queue.scheduling_queue import UnschedulablePods

    rng = random.Random(7)
    pods = UnschedulablePods(lambda queue, event: None)
    infos = {}
    for step in range(2000):
        uid = f"u{rng.randrange(40)}"
        op = rng.random()
        if op < 0.45:
            pinfo = infos.get(uid) if uid in pods and rng.random() < 0.5 else QueuedPodInfo(PodInfo(make_pod(uid, uid=uid)), 0.0)
            pinfo.gating_plugin = rng.choice(["", "", "A", "B"])
            pods.add(pinfo, "test")
            infos[uid] = pinfo
        elif op < 0.7 and uid in pods:
            pinfo = pods[uid]
            pinfo.gating_plugin = rng.choice(["", "A", "B"])
            pods.regroup(pinfo)
        else:
            assert (pods.pop(uid) is not None) == (uid in infos)
            infos.pop(uid, None)
        order = list(pods)
        for plugin in ("", "A", "B"):
            wanted = {plugin} | ({""} if plugin else set())
            got = pods.candidates(lambda pl, plugin=plugin: pl == plugin)
            assert [p.pod.uid for p in got] == [u for u in order if pods[u].gating_plugin in wanted], step
        assert pods.num_gated() == sum(1 for p in pods.values() if p.gating_plugin)
    with pytest.raises(TypeError):
        pods["x"] = None


def test_gated_pod_regrouped_when_its_gating_plugin_changes():
    class Labelled:
        def __init__(self, name, label):
            self._name, self.label = name, label

        def name(self):
            return self._name

        def pre_enqueue(self, pod):
            return Status(Code.UNSCHEDULABLE, "gated") if pod.labels.get(self.label) else None

    first, second = Labelled("First", "first"), Labelled("Second", "second")
    q = PriorityQueue(priority_less, VirtualClock(), pre_enqueue_plugins={"default-scheduler": [first, second]},
                      queueing_hints={"default-scheduler": {
                          "First": [ClusterEventWithHint(NODE_ADD, None),
                                    ClusterEventWithHint(ClusterEvent(EventResource.TARGET_POD, ActionType.UPDATE),
                                                         None)],
                          "Second": [ClusterEventWithHint(NODE_LABEL, None)]}})
    pod = make_pod("p", labels={"first": "1", "second": "1"})
    q.add(pod)
    assert q.get(pod.uid).gating_plugin == "First" and q.num_gated() == 1
    moved = make_pod("p", labels={"second": "1"})  # First lets it through; Second gates it now
    q.update(pod, moved)
    assert q.where(pod.uid) == "unschedulable" and q.get(pod.uid).gating_plugin == "Second"
    q.move_all_to_active_or_backoff_queue(NODE_ADD)    # First's event: no longer its gate
    assert q.where(pod.uid) == "unschedulable"
    second.label = "none"                              # Second would let it through now
    q.move_all_to_active_or_backoff_queue(NODE_LABEL)
    assert q.where(pod.uid) == "active" and q.num_gated() == 0


# ------------------------------------------------------------------------------------------------
# Cluster events and queueing hints
# ------------------------------------------------------------------------------------------------
def test_match_cluster_events_rules():
    assert match_cluster_events(NODE_UPDATE, NODE_LABEL)           # incoming more specific
    assert not match_cluster_events(NODE_LABEL, NODE_UPDATE)       # incoming more generic
    assert not match_cluster_events(NODE_ALLOCATABLE, NODE_LABEL)  # disjoint bits
    pod_all = ClusterEvent(EventResource.POD, ActionType.ALL)
    assert match_cluster_events(pod_all, ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE))
    assert match_cluster_events(pod_all, ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.UPDATE_POD_LABEL))
    assert not match_cluster_events(pod_all, NODE_ADD)
    any_add = ClusterEvent(EventResource.WILDCARD, ActionType.ADD)
    assert match_cluster_events(any_add, NODE_ADD)
    wildcard = ClusterEvent(EventResource.WILDCARD, ActionType.ALL)
    assert match_cluster_events(wildcard, NODE_ADD)
    assert not match_cluster_events(NODE_ADD, EVENT_UNSCHEDULABLE_TIMEOUT)
    assert event_label(NODE_ADD) == "NodeAdd" and event_label(EVENT_FORCE_ACTIVATE) == "ForceActivate"


def test_events_move_only_pods_whose_rejectors_registered_them():
    clock = VirtualClock(100.0)
    hints = {"Fit": [ClusterEventWithHint(NODE_ADD, queue_hint), ClusterEventWithHint(NODE_ALLOCATABLE, queue_hint)],
             "Taint": [ClusterEventWithHint(NODE_UPDATE, skip_hint)]}
    q = new_queue(clock, hints=hints)
    fit, taint, volume = make_pod("fit"), make_pod("taint"), make_pod("volume")
    for p in (fit, taint, volume):
        q.add(p)
    fail(q, fit.uid, unschedulable={"Fit"})
    fail(q, taint.uid, unschedulable={"Taint"})
    fail(q, volume.uid, unschedulable={"Volume"})
    assert q.num_unschedulable() == 3
    q.move_all_to_active_or_backoff_queue(NODE_LABEL)  # Fit: not registered; Taint: hint says Skip
    assert q.num_unschedulable() == 3
    q.move_all_to_active_or_backoff_queue(NODE_UPDATE)  # generic Update: only Taint's Node/Update (Skip)
    assert q.num_unschedulable() == 3
    wildcard = ClusterEvent(EventResource.WILDCARD, ActionType.ALL)
    q.move_all_to_active_or_backoff_queue(wildcard, None, object())  # wildcard aimed at another object
    q.move_all_to_active_or_backoff_queue(wildcard, None, make_pod("someone-else"))
    assert q.num_unschedulable() == 3
    q.move_all_to_active_or_backoff_queue(NODE_ALLOCATABLE, None, None)
    assert q.where(fit.uid) == "backoff"  # still backing off (1 s) -> backoffQ
    assert q.where(taint.uid) == q.where(volume.uid) == "unschedulable"
    # once backed off, a matching event moves a pod straight to activeQ; the wildcard moves all
    clock.advance(5)
    q.move_all_to_active_or_backoff_queue(wildcard)
    assert q.where(taint.uid) == q.where(volume.uid) == "active"


def test_pre_check_filters_pods():
    q = new_queue(hints={"Fit": [ClusterEventWithHint(NODE_ADD, queue_hint)]})
    a, b = make_pod("a"), make_pod("b")
    q.add(a)
    q.add(b)
    fail(q, a.uid, unschedulable={"Fit"})
    fail(q, b.uid, unschedulable={"Fit"})
    q.move_all_to_active_or_backoff_queue(NODE_ADD, pre_check=lambda pod: pod.name == "b")
    assert q.where(a.uid) == "unschedulable" and q.where(b.uid) == "backoff"


@pytest.mark.parametrize("hint_fn", [
    None,
    lambda pod, old, new: (QueueingHint.QUEUE_SKIP, RuntimeError("bad object")),
    lambda pod, old, new: 1 / 0,
    lambda pod, old, new: QueueingHint.QUEUE,
])
def test_hint_none_error_or_exception_means_queue(hint_fn):
    q = new_queue(hints={"Fit": [ClusterEventWithHint(NODE_ADD, hint_fn)]})
    pod = make_pod("p")
    q.add(pod)
    fail(q, pod.uid, unschedulable={"Fit"})
    q.move_all_to_active_or_backoff_queue(NODE_ADD)
    assert q.where(pod.uid) == "backoff"


def test_hint_receives_pod_and_objects():
    seen = []

    def hint(pod, old, new):
        seen.append((pod.name, old, new))
        return QueueingHint.QUEUE_SKIP, None

    q = new_queue(hints={"Fit": [ClusterEventWithHint(NODE_ADD, hint)]})
    pod = make_pod("p")
    q.add(pod)
    fail(q, pod.uid, unschedulable={"Fit"})
    q.move_all_to_active_or_backoff_queue(NODE_ADD, "old", "new")
    assert seen == [("p", "old", "new")]
    assert q.where(pod.uid) == "unschedulable"


def test_pending_plugin_queue_goes_to_active_q_immediately():
    hints = {"Dra": [ClusterEventWithHint(NODE_ADD, queue_hint)],
             "Fit": [ClusterEventWithHint(NODE_ADD, queue_hint), ClusterEventWithHint(NODE_LABEL, queue_hint)]}
    q = new_queue(hints=hints)
    a, b = make_pod("a"), make_pod("b")
    q.add(a)
    q.add(b)
    pa = fail(q, a.uid, unschedulable={"Fit"}, pending={"Dra"})
    fail(q, b.uid, unschedulable={"Other"}, pending={"Dra"})
    assert q.is_backing_off(pa)
    q.move_all_to_active_or_backoff_queue(NODE_LABEL)   # only a's Unschedulable plugin says Queue
    assert q.where(a.uid) == "backoff" and q.where(b.uid) == "unschedulable"
    q.move_all_to_active_or_backoff_queue(NODE_ADD)     # b's Pending plugin says Queue: no backoff
    assert q.where(b.uid) == "active"


def test_events_received_in_flight_are_replayed():
    hints = {"Fit": [ClusterEventWithHint(NODE_ADD, queue_hint), ClusterEventWithHint(NODE_LABEL, skip_hint)]}
    q = new_queue(hints=hints)
    a, b, c = make_pod("a", priority=3), make_pod("b", priority=2), make_pod("c", priority=1)
    for p in (a, b, c):
        q.add(p)
    q.move_all_to_active_or_backoff_queue(NODE_ADD)  # nothing in flight: not recorded
    pa = q.pop()
    q.move_all_to_active_or_backoff_queue(NODE_LABEL)  # in flight: recorded, hint would skip
    pb = q.pop()
    q.move_all_to_active_or_backoff_queue(NODE_ADD)  # in flight (both): recorded
    assert [e.event for e in q.in_flight_events()] == [NODE_LABEL, NODE_ADD]
    q.move_all_to_active_or_backoff_queue(ClusterEvent(EventResource.PERSISTENT_VOLUME, ActionType.ADD))
    assert len(q.in_flight_events()) == 2  # no plugin registered it: dropped
    pc = q.pop()  # popped after every event

    for pinfo in (pa, pb, pc):
        pinfo.unschedulable_plugins = {"Fit"}
    q.add_unschedulable_if_not_present(pa, q.scheduling_cycle())
    q.add_unschedulable_if_not_present(pb, q.scheduling_cycle())
    q.add_unschedulable_if_not_present(pc, q.scheduling_cycle())
    assert q.where(a.uid) == "backoff"         # saw NodeAdd during its attempt
    assert q.where(b.uid) == "backoff"
    assert q.where(c.uid) == "unschedulable"   # saw nothing
    assert q.in_flight_events() == [] and q.in_flight_pods() == []


def test_in_flight_events_pruned_when_oldest_pod_done():
    q = new_queue(hints={"Fit": [ClusterEventWithHint(NODE_ADD, queue_hint)]})
    a, b = make_pod("a", priority=2), make_pod("b", priority=1)
    q.add(a)
    q.add(b)
    q.pop()
    q.move_all_to_active_or_backoff_queue(NODE_ADD)
    q.pop()
    q.move_all_to_active_or_backoff_queue(NODE_ADD, None, "second")
    assert len(q.in_flight_events()) == 2
    q.done(a.uid)
    assert [e.new_obj for e in q.in_flight_events()] == ["second"]
    q.done(b.uid)
    assert q.in_flight_events() == []


def test_pod_update_while_in_flight_is_replayed():
    hints = {"TaintToleration": [ClusterEventWithHint(
        ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_TOLERATIONS), queue_hint)]}
    q = new_queue(hints=hints)
    pod = make_pod("p")
    q.add(pod)
    pinfo = q.pop()
    tolerating = pod.replace(tolerations=(object(),))
    q.update(pod, tolerating)
    assert not q.has(pod.uid)  # not queued while in flight
    pinfo.unschedulable_plugins = {"TaintToleration"}
    q.add_unschedulable_if_not_present(pinfo, q.scheduling_cycle())
    assert q.where(pod.uid) == "backoff"


def test_no_rejector_plugins_goes_to_error_backoff():
    q = new_queue()
    pod = make_pod("p")
    q.add(pod)
    fail(q, pod.uid)
    assert q.where(pod.uid) == "backoff" and q.num_error_backoff() == 1


# ------------------------------------------------------------------------------------------------
# Unschedulable leftovers and next_wakeup
# ------------------------------------------------------------------------------------------------
def test_unschedulable_leftovers_flushed_after_five_minutes():
    clock = VirtualClock(0.0)
    q = new_queue(clock)
    high, low = make_pod("high", priority=10), make_pod("low", priority=1)
    q.add(high)
    q.add(low)
    fail(q, high.uid, unschedulable={"X"})
    clock.advance(10)
    fail(q, low.uid, unschedulable={"X"})
    assert q.num_unschedulable() == 2
    # 30 s flush ticks; a pod must be unschedulable for strictly more than 300 s
    assert q.next_wakeup() == 330.0
    clock.advance_to(300.0)
    q.flush_unschedulable_pods_leftover()
    assert q.num_unschedulable() == 2
    clock.advance_to(305.0)
    q.flush_unschedulable_pods_leftover()
    assert q.where(high.uid) == "active" and q.where(low.uid) == "unschedulable"
    assert q.next_wakeup() == 330.0
    clock.advance_to(330.0)
    q.flush_unschedulable_pods_leftover()
    assert [p.name for p in q.pods_in_active_q()] == ["high", "low"]
    assert q.next_wakeup() is None


def test_leftover_still_backing_off_goes_to_backoff_q():
    clock = VirtualClock(0.0)
    q = new_queue(clock, pod_max_in_unschedulable_pods_duration=5.0, pod_max_backoff=60.0,
                  pod_initial_backoff=20.0)
    pod = make_pod("p")
    q.add(pod)
    fail(q, pod.uid, unschedulable={"X"})
    clock.advance(6)
    q.flush_unschedulable_pods_leftover()
    assert q.where(pod.uid) == "backoff"
    assert q.next_wakeup() == 21.0


def test_next_wakeup_takes_earliest_of_both_backoff_heaps():
    clock = VirtualClock(10.0)
    q = new_queue(clock, hints={"Fit": [ClusterEventWithHint(NODE_ADD, queue_hint)]})
    a, b = make_pod("a", priority=2), make_pod("b", priority=1)
    q.add(a)
    q.add(b)
    fail(q, a.uid)
    q.activate([a])
    fail(q, a.uid)                      # second error: 2 s -> window 12 -> flushed at 13
    clock.advance(0.5)
    pb = q.pop()
    q.move_all_to_active_or_backoff_queue(NODE_ADD)
    pb.unschedulable_plugins = {"Fit"}
    q.add_unschedulable_if_not_present(pb, q.scheduling_cycle())
    assert q.where(b.uid) == "backoff"
    assert q.next_wakeup() == 12.0     # b: 10.5 + 1 -> window 11 -> flushed at 12
    clock.advance_to(12.0)
    assert q.flush_backoff_q_completed() == 1
    assert q.where(b.uid) == "active" and q.where(a.uid) == "backoff"
    assert q.next_wakeup() == 13.0
    assert q.pop().pod.name == "b"
    assert q.pop() is None              # the error queue is never popped early
    clock.advance_to(13.0)
    assert q.flush_backoff_q_completed() == 1 and q.next_wakeup() is None


# ------------------------------------------------------------------------------------------------
# activate / delete / update
# ------------------------------------------------------------------------------------------------
def test_activate_from_each_place():
    hints = {"Fit": [ClusterEventWithHint(NODE_ADD, skip_hint)]}
    q = new_queue(hints=hints)
    unsched, backoff, flying, unknown = (make_pod(n, priority=p) for n, p in
                                         (("u", 4), ("b", 3), ("f", 2), ("x", 1)))
    for p in (unsched, backoff, flying):
        q.add(p)
    fail(q, unsched.uid, unschedulable={"Fit"})
    fail(q, backoff.uid)
    pf = q.pop()
    q.activate({"u": unsched, "b": backoff, "f": flying, "x": unknown})
    assert q.where(unsched.uid) == q.where(backoff.uid) == "active"  # no backoff check on activate
    assert q.where(unknown.uid) is None
    # the in-flight pod gets a ForceActivate event: it comes back although its hint would skip
    pf.unschedulable_plugins = {"Fit"}
    q.add_unschedulable_if_not_present(pf, q.scheduling_cycle())
    assert q.where(flying.uid) == "backoff"


def test_delete_from_each_sub_queue_and_nominator():
    q = new_queue()
    a, b, c = make_pod("a", priority=3), make_pod("b", priority=2), make_pod("c", priority=1)
    for p in (a, b, c):
        q.add(p)
    fail(q, a.uid, unschedulable={"X"})
    fail(q, b.uid)
    q.add_nominated_pod(q.get(c.uid).pod_info, NominatingInfo("n1", NominatingMode.OVERRIDE))
    assert (q.num_active(), q.num_backoff(), q.num_unschedulable()) == (1, 1, 1)
    for p in (a, b, c):
        q.delete(p)
        assert not q.has(p.uid)
    assert len(q) == 0 and q.nominated_pods_for_node("n1") == []
    q.delete(make_pod("never-added"))  # no error


def test_update_in_active_q_reorders():
    clock = VirtualClock()
    q = new_queue(clock)
    a, b = make_pod("a", priority=1), make_pod("b", priority=2)
    q.add(a)
    q.add(b)
    pinfo = q.get(a.uid)
    a2 = a.replace(priority=5)
    q.update(a, a2)
    assert q.get(a.uid) is pinfo and pinfo.pod is a2
    assert q.pop().pod is a2


def test_update_in_backoff_q_stays_there():
    q = new_queue()
    pod = make_pod("p")
    q.add(pod)
    pinfo = fail(q, pod.uid)
    new = pod.replace(labels={"x": "y"})
    q.update(pod, new)
    assert q.where(pod.uid) == "backoff" and pinfo.pod is new


def test_update_in_unschedulable_uses_hints():
    label = ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_LABEL)
    q = new_queue(hints={"Affinity": [ClusterEventWithHint(label, queue_hint)]})
    pod = make_pod("p")
    q.add(pod)
    fail(q, pod.uid, unschedulable={"Affinity"})
    same_labels = pod.replace(priority=7)
    q.update(pod, same_labels)  # a generic Pod/Update: not registered
    assert q.where(pod.uid) == "unschedulable" and q.get(pod.uid).pod is same_labels
    relabelled = same_labels.replace(labels={"app": "web"})
    q.update(same_labels, relabelled)
    assert q.where(pod.uid) == "backoff"


def test_update_unknown_pod_adds_it():
    q = new_queue()
    pod = make_pod("p")
    q.update(pod, pod.replace(labels={"a": "b"}))
    assert q.where(pod.uid) == "active"


def test_pod_scheduling_properties_change():
    base = make_pod("p", cpu="1", labels={"a": "1"}, schedulingGates=[{"name": "g"}])
    events = pod_scheduling_properties_change(base.replace(labels={"a": "2"}, scheduling_gates=()), base)
    assert [e.action_type for e in events] == [ActionType.UPDATE_POD_LABEL,
                                               ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED]
    assert all(e.resource == EventResource.UNSCHEDULED_POD for e in events)
    smaller = make_pod("p", cpu="500m", labels={"a": "1"}, schedulingGates=[{"name": "g"}])
    assert [e.action_type for e in pod_scheduling_properties_change(smaller, base)] == \
        [ActionType.UPDATE_POD_SCALE_DOWN]
    assert [e.action_type for e in pod_scheduling_properties_change(base, smaller)] == \
        [ActionType.UPDATE_POD_SCALE_UP]
    bound = base.replace(node_name="n1")
    assert pod_scheduling_properties_change(bound, base) == [ClusterEvent(EventResource.ASSIGNED_POD,
                                                                          ActionType.UPDATE)]


def _properties_change_by_value(new_pod, old_pod, is_target_pod=False):
    """``pod_scheduling_properties_change`` comparing labels and requests by value always (as
    before the shortcut for the objects a status patch shares)."""
    from fastsched.api.resources import requests_without_claim_statuses
    r = (EventResource.ASSIGNED_POD if new_pod.node_name else
         EventResource.TARGET_POD if is_target_pod else EventResource.UNSCHEDULED_POD)
    actions = []
    if dict(new_pod.labels) != dict(old_pod.labels):
        actions.append(ActionType.UPDATE_POD_LABEL)
    new_req, old_req = requests_without_claim_statuses(new_pod), requests_without_claim_statuses(old_pod)
    if any(n not in new_req or v > new_req[n] for n, v in old_req.items()):
        actions.append(ActionType.UPDATE_POD_SCALE_DOWN)
    if any(n not in old_req or v > old_req[n] for n, v in new_req.items()):
        actions.append(ActionType.UPDATE_POD_SCALE_UP)
    if not new_pod.scheduling_gates and old_pod.scheduling_gates:
        actions.append(ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)
    if len(new_pod.tolerations) != len(old_pod.tolerations):
        actions.append(ActionType.UPDATE_POD_TOLERATIONS)
    if tuple(new_pod.resource_claim_statuses) != tuple(old_pod.resource_claim_statuses):
        actions.append(ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM)
    return [ClusterEvent(r, a) for a in actions or [ActionType.UPDATE]]


@pytest.mark.parametrize("seed", range(6))
def test_pod_scheduling_properties_change_shared_objects_as_by_value(seed):
    # status patches (with_status: labels and request totals shared), replaces (equal copies) and
    # real changes of labels, requests, gates and tolerations, in seeded combinations
    rng = random.Random(seed)
    for _ in range(60):
        kw = {"cpu": rng.choice(["100m", "1", "2"]), "labels": {"a": rng.choice("12")}}
        if rng.random() < 0.3:
            kw["schedulingGates"] = [{"name": "g"}]
        old = make_pod("p", **kw)
        old.requests  # (the totals computed, as a queued pod's are)
        pick = rng.random()
        if pick < 0.4:
            new = old.with_status(nominated_node_name=rng.choice(["", "n1"]))
            assert new.labels is old.labels and new.requests is old.requests  # (the shortcut's case)
        elif pick < 0.6:
            new = old.replace(labels=dict(old.labels))  # equal labels, another object
        else:
            kw2 = dict(kw, cpu=rng.choice(["100m", "1", "2"]), labels={"a": rng.choice("12")})
            if rng.random() < 0.5:
                kw2.pop("schedulingGates", None)
            new = make_pod("p", **kw2)
        for target in (False, True):
            assert pod_scheduling_properties_change(new, old, target) == _properties_change_by_value(new, old, target)


def test_update_labels_the_pods_own_update_target_pod():
    """``PriorityQueue.Update`` (v1.37.2): the pod's own update is TargetPod, so a registration for
    another unscheduled pod's update (UnscheduledPod) does not requeue it, a TargetPod or Pod one
    does (TestPriorityQueue_Update registers EventTargetPodUpdate)."""
    for resource, want in ((EventResource.UNSCHEDULED_POD, "unschedulable"), (EventResource.TARGET_POD, "backoff"),
                           (EventResource.POD, "backoff")):
        q = new_queue(hints={"P": [ClusterEventWithHint(ClusterEvent(resource, ActionType.UPDATE), queue_hint)]})
        pod = make_pod("p")
        q.add(pod)
        fail(q, pod.uid, unschedulable={"P"})
        q.update(pod, pod.replace(annotations={"foo": "test"}))
        assert q.where(pod.uid) == want, resource


# ------------------------------------------------------------------------------------------------
# Assigned pod events
# ------------------------------------------------------------------------------------------------
def test_assigned_pod_added_considers_every_unschedulable_pod():
    """Upstream v1.37.2 addAssignedPodToCache: MoveAllToActiveOrBackoffQueue(AssignedPodAdd), no
    pre-filter by cross-topology terms: every pod whose rejector registered the event moves on
    its hint's Queue, whatever its namespace or terms (more in test_queue_assigned_pod_events.py)."""
    all_pods = ClusterEvent(EventResource.POD, ActionType.ALL)
    hints = {n: [ClusterEventWithHint(all_pods, queue_hint)] for n in ("PodTopologySpread", "InterPodAffinity")}
    hints["Fit"] = [ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.DELETE
                                                      | ActionType.UPDATE_POD_SCALE_DOWN), queue_hint)]
    q = new_queue(hints=hints)
    pods = {"spread": ("PodTopologySpread", "default"), "spread2": ("PodTopologySpread", "other"),
            "aff": ("InterPodAffinity", "default"), "fit": ("Fit", "default")}
    for name, (plugin, ns) in pods.items():
        p = make_pod(name, namespace=ns)
        q.add(p)
        fail(q, p.uid, unschedulable={plugin})
    assigned = make_pod("web-1", labels={"app": "web"}, node_name="n1", cpu="2")
    q.assigned_pod_added(assigned)
    assert {p.name for p in q.pods_in_backoff_q()} == {"spread", "spread2", "aff"}
    # a scale-down update reaches Fit's registration
    smaller = make_pod("web-1", labels={"app": "web"}, node_name="n1", cpu="1")
    q.assigned_pod_updated(assigned, smaller)
    assert "fit" in {p.name for p in q.pods_in_backoff_q()}


# ------------------------------------------------------------------------------------------------
# Introspection and the nominator wiring
# ------------------------------------------------------------------------------------------------
def test_pending_pods_summary():
    q = new_queue(gate=Gate())
    a, b, c, d = (make_pod(n) for n in "abcd")
    q.add(a)
    q.add(b)
    q.add(c)
    q.add(make_pod("g", schedulingGates=[{"name": "x"}]))
    fail(q, q.pods_in_active_q()[0].uid, unschedulable={"X"})
    fail(q, q.pods_in_active_q()[0].uid)
    q.add(d)
    pods, summary = q.pending_pods()
    assert summary == "activeQ:2; backoffQ:1; unschedulablePods:2"
    assert len(pods) == 5 and {p.name for p in pods} == {"a", "b", "c", "d", "g"}
    kinds = sorted(where for _, where in q.queued_pod_infos())
    assert kinds == ["active", "active", "backoff", "unschedulable", "unschedulable"]


def test_queue_keeps_nominator_consistent():
    q = new_queue()
    pod = make_pod("p").replace(nominated_node_name="n1")
    q.add(pod)  # status.nominatedNodeName is picked up
    assert [pi.pod for pi in q.nominated_pods_for_node("n1")] == [pod]
    assert q.nominated_node_names() == {"n1"}
    moved = pod.replace(nominated_node_name="n2", labels={"v": "2"})
    q.update(pod, moved)
    assert q.nominated_pods_for_node("n1") == [] and [pi.pod for pi in q.nominated_pods_for_node("n2")] == [moved]
    # the queue resolves nominations to its own current PodInfo
    assert q.nominated_pods_for_node("n2")[0] is q.get(pod.uid).pod_info
    q.delete(moved)
    assert q.nominated_node_names() == set()


def test_metrics_callback():
    seen = []
    q = new_queue(metrics=lambda name, labels: seen.append((name, labels["queue"], labels["event"])))
    pod = make_pod("p")
    q.add(pod)
    fail(q, pod.uid)
    assert seen == [("queue_incoming_pods", "active", "UnscheduledPodAdd"),
                    ("queue_incoming_pods", "backoff", "ScheduleAttemptFailure")]


def test_update_of_a_pod_in_no_queue_is_an_add():
    """Upstream Update ends with addPod for a pod in no queue: the move is labelled
    UnscheduledPodAdd, as for Add (v1.37.2 ``scheduling_queue.go``), gated or not."""
    seen = []
    q = new_queue(gate=Gate(), metrics=lambda name, labels: seen.append((labels["queue"], labels["event"])))
    pod = make_pod("p")
    q.update(None, pod)
    gated = make_pod("g", schedulingGates=[{"name": "example.com/gate"}])
    q.update(gated, gated.replace(labels={"v": "2"}))
    assert seen == [("active", "UnscheduledPodAdd"), ("unschedulable", "UnscheduledPodAdd")]


def test_a_gated_pod_added_is_nominated():
    """Upstream addPod records the nomination before PreEnqueue, so a gated pod's
    status.nominatedNodeName is in the nominator; a later move to activeQ does not renominate."""
    q = new_queue(gate=Gate())
    gated = make_pod("g", schedulingGates=[{"name": "example.com/gate"}]).replace(nominated_node_name="n1")
    q.add(gated)
    assert [pi.pod.name for pi in q.nominated_pods_for_node("n1")] == ["g"]
    assert q.get(gated.uid) is not None


def test_profiles_use_their_own_hints_and_pre_enqueue():
    other_gate = Gate("OtherGate")
    q = PriorityQueue(priority_less, VirtualClock(),
                      pre_enqueue_plugins={"other": [other_gate]},
                      queueing_hints={"default-scheduler": {"Fit": [ClusterEventWithHint(NODE_ADD, queue_hint)]},
                                      "other": {"Fit": [ClusterEventWithHint(NODE_ADD, skip_hint)]}})
    mine = make_pod("mine", schedulingGates=[{"name": "g"}])
    theirs = make_pod("theirs", schedulerName="other", schedulingGates=[{"name": "g"}])
    q.add(mine)
    q.add(theirs)
    assert q.where(mine.uid) == "active" and q.get(theirs.uid).gating_plugin == "OtherGate"
    ours = make_pod("ours")
    other2 = make_pod("other2", schedulerName="other")
    q.delete(mine)
    q.add(ours)
    q.add(other2)
    fail(q, q.pods_in_active_q()[0].uid, unschedulable={"Fit"})
    fail(q, q.pods_in_active_q()[0].uid, unschedulable={"Fit"})
    q.move_all_to_active_or_backoff_queue(NODE_ADD)
    assert q.where(ours.uid) == "backoff" and q.where(other2.uid) == "unschedulable"


def test_pod_info_shared_with_nominator_on_failure_path():
    q = new_queue()
    pod = make_pod("p")
    q.add(pod)
    pinfo = q.pop()
    q.add_nominated_pod(pinfo.pod_info, NominatingInfo("n1", NominatingMode.OVERRIDE))
    assert q.nominated_pods_for_node("n1")[0] is pinfo.pod_info  # in flight: the stored PodInfo
    q.add_unschedulable_if_not_present(pinfo, q.scheduling_cycle())
    assert isinstance(q.nominated_pods_for_node("n1")[0], PodInfo)


@pytest.mark.parametrize("arrivals", ["random", "ordered"])
def test_keyed_heap_pops_as_the_less_heap(arrivals):
    """activeQ with PrioritySort's sort_key pops exactly as the less-ordered heap under random
    adds, updates (in place + fix, and add_or_update), deletes and pops, ties included.
    "ordered": most pods arrive at one priority with increasing timestamps (the sorted run
    serves them), some at other priorities or earlier timestamps (the heap does)."""
    import random

    from fastsched.framework.types import QueuedPodInfo
    from fastsched.plugins.queuesort import PrioritySort

    plugin = PrioritySort()
    rng = random.Random(5)
    for _ in range(20):
        less_heap, keyed_heap = Heap(plugin.less), KeyedHeap(plugin.sort_key)
        infos: dict[str, QueuedPodInfo] = {}
        popped_less, popped_keyed = [], []
        clock = 0.0
        for step in range(600):
            op = rng.random()
            if op < 0.45 or not infos:
                uid = f"p{rng.randrange(200)}"
                if arrivals == "ordered" and rng.random() < 0.8:
                    clock += rng.choice((0.0, 1.0))
                    priority, timestamp = 0, clock
                else:
                    priority, timestamp = rng.choice([None, 0, 5, 10]), float(rng.randrange(4))
                info = QueuedPodInfo(PodInfo(make_pod(uid, uid=uid, priority=priority)), timestamp=timestamp)
                infos[uid] = info
                less_heap.add_or_update(uid, info)
                keyed_heap.add_or_update(uid, info)
            elif op < 0.6:
                uid = rng.choice(sorted(infos))
                infos[uid].timestamp = float(rng.randrange(4))  # changed in place, then fixed
                less_heap.fix(uid)
                keyed_heap.fix(uid)
            elif op < 0.75:
                uid = rng.choice(sorted(infos))
                del infos[uid]
                assert less_heap.delete(uid) is keyed_heap.delete(uid)
            else:
                a, b = less_heap.pop(), keyed_heap.pop()
                popped_less.append(a.pod.uid)
                popped_keyed.append(b.pod.uid)
                del infos[a.pod.uid]
            assert len(less_heap) == len(keyed_heap) == len(infos)
            assert less_heap.peek() is keyed_heap.peek()
        assert [i.pod.uid for i in less_heap.values()] == [i.pod.uid for i in keyed_heap.values()]
        assert popped_less == popped_keyed and len(popped_less) > 50


@pytest.mark.parametrize("windows", [True, False])
def test_keyed_backoff_q_pops_as_the_less_heaps(windows):
    """backoffQ given PrioritySort's sort_key (KeyedHeaps: the expiration, then the key) pops as
    upstream's less-ordered heaps (lessBackoffCompleted, with the QueueSort less inside an ordering
    window) under random adds to both heaps, updates, deletes, pops of podBackoffQ's head and
    pops of every completed pod, with expirations, priorities and timestamps that tie."""
    from fastsched.framework.types import QueuedPodInfo
    from fastsched.plugins.queuesort import PrioritySort
    from fastsched.scheduler.backend.queue.backoff_queue import BackoffQueue

    plugin = PrioritySort()
    rng = random.Random(11)
    for _ in range(12):
        clock = VirtualClock(100.0)
        ref = BackoffQueue(clock, 1.0, 10.0, plugin.less, windows, lambda q, e: None)
        keyed = BackoffQueue(clock, 1.0, 10.0, plugin.less, windows, lambda q, e: None, plugin.sort_key)
        assert type(keyed.pod_backoff_q) is KeyedHeap and type(keyed.pod_error_backoff_q) is KeyedHeap
        # the reference: upstream's less functions on less-ordered heaps
        if not windows:
            ref.pod_backoff_q = Heap(lambda a, b: ref.backoff_time(a) < ref.backoff_time(b))
        ref.pod_error_backoff_q = Heap(lambda a, b: ref.backoff_time(a) < ref.backoff_time(b))
        assert type(ref.pod_backoff_q) is Heap
        live: set[str] = set()
        popped = [], []
        for step in range(500):
            op = rng.random()
            if op < 0.45 or not live:
                uid = f"p{rng.randrange(120)}"
                pod = make_pod(uid, uid=uid, priority=rng.choice([None, 0, 5, 10]))
                fields = (clock.now() - rng.choice((0.0, 0.25, 0.5, 1.0)), rng.randrange(1, 4),
                          rng.choice((0, 0, 1, 2)), rng.random() < 0.7)
                for bq, out in zip((ref, keyed), popped):
                    info = QueuedPodInfo(PodInfo(pod), timestamp=fields[0])
                    info.unschedulable_count, info.consecutive_errors_count = fields[1], fields[2]
                    if fields[3]:
                        info.unschedulable_plugins.add("Fit")
                    bq.add(info, "test")
                live.add(uid)
            elif op < 0.55:
                uid = rng.choice(sorted(live))
                pod = make_pod(uid, uid=uid, priority=rng.choice([None, 0, 5, 10]))
                assert (ref.update(uid, pod) is None) == (keyed.update(uid, pod) is None) is False
            elif op < 0.65:
                uid = rng.choice(sorted(live))
                assert ref.delete(uid) is keyed.delete(uid) is True
                live.discard(uid)
            elif op < 0.85:
                got = [bq.pop_backoff() for bq in (ref, keyed)]
                assert (got[0] is None) == (got[1] is None)
                if got[0] is not None:
                    assert got[0].pod.uid == got[1].pod.uid
                    popped[0].append(got[0].pod.uid)
                    popped[1].append(got[1].pod.uid)
                    live.discard(got[0].pod.uid)
            else:
                clock.advance(rng.choice((0.25, 0.5, 1.0)))
                got = [[p.pod.uid for p in bq.pop_all_backoff_completed()] for bq in (ref, keyed)]
                assert got[0] == got[1]
                live.difference_update(got[0])
                popped[0].extend(got[0])
                popped[1].extend(got[1])
            assert [p.pod.uid for p in ref.heads()] == [p.pod.uid for p in keyed.heads()]
            assert len(ref) == len(keyed) == len(live)
        assert [p.pod.uid for p in ref.list()] == [p.pod.uid for p in keyed.list()]
        assert popped[0] == popped[1] and len(popped[0]) > 100


def test_sort_key_is_not_trusted_below_an_overridden_less():
    """A QueueSort subclass overriding less() but inheriting sort_key() is ordered by its less()."""
    from fastsched import load_config
    from fastsched.plugins.queuesort import NAME as PRIORITY_SORT, PrioritySort
    from fastsched.runtime import Registry
    from fastsched.scheduler import Scheduler
    from fastsched.testing import make_node

    class LowestPriorityFirst(PrioritySort):
        def less(self, a, b):
            return a.pod.effective_priority < b.pod.effective_priority

    registry = Registry({"LowestPriorityFirst": lambda args, handle: LowestPriorityFirst()})  # out-of-tree
    cfg = load_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                       "profiles": [{"schedulerName": "default-scheduler", "plugins": {"queueSort": {
                           "enabled": [{"name": "LowestPriorityFirst"}], "disabled": [{"name": PRIORITY_SORT}]}}}]},
                      registry_names=["LowestPriorityFirst"])
    s = Scheduler(cfg, registry=registry, seed=0)
    assert type(s.queue._active_q.queue) is Heap  # ordered by less(), not the inherited key
    s.add_nodes([make_node("n", cpu="10", memory="10Gi")])
    s.add_pods([make_pod(f"p{prio}", priority=prio, cpu="100m") for prio in (5, 1, 9)])
    order: list[str] = []
    s.bound_callbacks.append(lambda r: order.append(r.pod.name))
    s.run()
    assert order == ["p1", "p5", "p9"]


def test_keyed_heap_shares_equal_keys_and_takes_unhashable_ones():
    """Equal sort keys are stored as one object (comparisons stop at identity); the table of
    shared keys stays bounded, and a key that cannot be hashed is used as it is."""
    heap = KeyedHeap(lambda v: (v // 10, 0.0))
    for i in range(100):
        heap.add_or_update(f"k{i}", i)
    firsts = {}
    for e in heap._entries:
        assert firsts.setdefault(e[0], e[0]) is e[0]  # one object per distinct key
    for i in range(100, 5000):  # many distinct keys while few are live
        heap.add_or_update(f"k{i}", i * 10)
        heap.delete(f"k{i}")
    assert len(heap._shared_keys) <= 2 * len(heap) + 65
    assert [heap.pop() for _ in range(len(heap))] == list(range(100))

    unhashable = KeyedHeap(lambda v: [v % 3, v])
    for i in (5, 1, 4, 2):
        unhashable.add_or_update(str(i), i)
    assert [unhashable.pop() for _ in range(4)] == [1, 4, 2, 5]


@pytest.mark.parametrize("seed", [0, 1])
def test_heaps_add_or_update_many_is_add_or_update_of_each(seed):
    """``add_or_update_many`` (activeQ's add of a run of new pods at once) leaves both heaps as
    ``add_or_update`` of each item in turn: the same pops, also with keys already in the heap
    (an update keeps its insertion rank), keys repeated in one call, and deletions between calls
    (the batch's single sparse check)."""
    rng = random.Random(seed)
    for make in (lambda: Heap(lambda a, b: a // 7 < b // 7), lambda: KeyedHeap(lambda v: v // 7)):
        one, many = make(), make()
        for _ in range(30):
            items = [(f"k{rng.randrange(60)}", rng.randrange(100)) for _ in range(rng.randrange(1, 12))]
            for key, value in items:
                one.add_or_update(key, value)
            many.add_or_update_many(items)
            for _ in range(rng.randrange(4)):
                key = f"k{rng.randrange(60)}"
                assert one.delete(key) == many.delete(key)
            if rng.random() < 0.3:
                assert one.pop() == many.pop()
        assert len(one) == len(many)
        assert [one.pop() for _ in range(len(one))] == [many.pop() for _ in range(len(many))]


def test_assigned_pod_added_without_unschedulable_pods_still_records_the_event_in_flight():
    hints = {"Fit": [ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD, ActionType.ADD), queue_hint)]}
    q = new_queue(hints=hints)
    q.add(make_pod("a"))
    q.pop()
    assert q.num_unschedulable() == 0
    bound = make_pod("b", node_name="n1")
    q.assigned_pod_added(bound)
    q.assigned_pod_added(bound)  # the second answer for the same event comes from the memo
    assert [e.new_obj for e in q.in_flight_events()] == [bound, bound]


# ------------------------------------------------------------------------------------------------
# pod signatures (OpportunisticBatching): scheduling_queue_test.go's gate table before
# TestPriorityQueue_AddComputesSignature, TestPriorityQueue_AddComputesSignature,
# TestPriorityQueue_UpdateRecomputesSignature and TestPriorityQueue_MultipleProfiles
# ------------------------------------------------------------------------------------------------
def _sig_by_label(pod):
    val = pod.labels.get("key")
    return f"sig-{val}" if val is not None else "sig-default"


@pytest.mark.parametrize("case", [
    # (name, signers (None: the gate is off or none registered), pod's scheduler name, expected)
    ("Feature gate disabled", None, "default-scheduler", None),
    ("No signers configured", None, "default-scheduler", None),
    ("Signer not found for scheduler", {"default-scheduler": lambda pod: "sig-1"}, "custom-scheduler", None),
    ("Successful signature computation", {"default-scheduler": lambda pod: "sig-1"}, "default-scheduler", "sig-1"),
    ("Signer returns nil (unsignable pod)", {"default-scheduler": lambda pod: None}, "default-scheduler", None),
], ids=lambda c: c[0])
def test_sign_pod(case):
    _, signers, scheduler_name, expected = case
    q = new_queue(pod_signers=signers)
    assert q._sign_pod(make_pod("pod1", schedulerName=scheduler_name)) == expected


def test_add_computes_signature():
    q = new_queue(pod_signers={"default-scheduler": _sig_by_label})
    pod = make_pod("pod1", labels={"key": "value1"})
    q.add(pod)
    assert q.get(pod.uid).pod_signature == "sig-value1"


@pytest.mark.parametrize("where", ["pod in activeQ", "pod in backoffQ", "pod in unschedulablePods",
                                   "pod not in any queue"])
def test_update_recomputes_signature(where):
    q = new_queue(pod_signers={"default-scheduler": _sig_by_label})
    pod1 = make_pod("pod1", labels={"key": "value1"})
    pod2 = pod1.replace(labels={"key": "value2"})
    if where == "pod in activeQ":
        q.add(pod1)
    elif where == "pod in backoffQ":
        q._backoff_q.add(q._new_queued_pod_info(pod1), "UnscheduledPodAdd")
    elif where == "pod in unschedulablePods":
        q._unschedulable_pods.add(q._new_queued_pod_info(pod1), "UnscheduledPodAdd")
    if where != "pod not in any queue":
        assert q.get(pod1.uid).pod_signature == "sig-value1"
    q.update(pod1, pod2)
    assert q.get(pod2.uid).pod_signature == "sig-value2"


def test_multiple_profiles_sign_with_their_own_signer():
    q = new_queue(pod_signers={"scheduler-1": lambda pod: "sig-scheduler-1",
                               "scheduler-2": lambda pod: "sig-scheduler-2"})
    pods = [make_pod("pod1", schedulerName="scheduler-1"), make_pod("pod2", schedulerName="scheduler-2"),
            make_pod("pod3", schedulerName="scheduler-3")]
    for p in pods:
        q.add(p)
    assert [q.get(p.uid).pod_signature for p in pods] == ["sig-scheduler-1", "sig-scheduler-2", None]
