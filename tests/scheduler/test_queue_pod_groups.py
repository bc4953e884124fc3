"""The scheduling queue's pod group entities (GenericWorkload).

Transcribed from ``pkg/scheduler/backend/queue/scheduling_queue_test.go`` (v1.37.2):
``TestAddPodGroupMember``, ``TestDeletePodGroupMember``, ``TestAddAttemptedPodGroupIfNeeded``,
``TestAddUnschedulablePodIfNotPresentPodGroupMember``, ``TestActivatePodGroupMember``,
``TestAddPodGroup``, ``TestDeletePodGroup`` (CompositePodGroup cases excepted), with
``setupInitialPodGroupState``'s states; ``pod_group_member_pods_test.go``; the group backoff of
``backoff_queue.go`` (``calculateBackoffDuration``); ``PodGroupMemberPodsOrderingFunc``.
"""
from __future__ import annotations

import pytest

from fastsched.api.objects import PodSchedulingGroup
from fastsched.api.scheduling import GangSchedulingPolicy, PodGroup, PodGroupSchedulingPolicy
from fastsched.clock import VirtualClock
from fastsched.framework import Code, Status
from fastsched.framework.events import EVENT_FORCE_ACTIVATE
from fastsched.framework.podgroups import QueuedPodGroupInfo, member_order_key
from fastsched.framework.types import PodInfo, QueuedPodInfo
from fastsched.plugins.queuesort import PrioritySort
from fastsched.scheduler.backend.queue import PriorityQueue
from fastsched.scheduler.backend.queue.pod_groups import PodGroupMemberPods
from fastsched.testing import make_pod

PG = "pg-test"
KEY = f"podgroup/ns1/{PG}"


class AllowList:
    """scheduling_queue_test.go's preEnqueuePlugin: pods with an allowed label pass."""

    def __init__(self, *allow: str):
        self.allow = allow

    def name(self) -> str:
        return "preEnqueuePlugin"

    def pre_enqueue(self, pod):
        if any(label in pod.labels for label in self.allow):
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "pod label not in allowlists")


def member(name: str, *, allow: bool = True, priority: int | None = None, group: str = PG):
    pod = make_pod(name, namespace="ns1", labels={"allow": ""} if allow else None, priority=priority)
    return pod.replace(uid=name, scheduling_group=PodSchedulingGroup(group))


def pod_group(name: str = PG) -> PodGroup:
    return PodGroup(name=name, namespace="ns1",
                    scheduling_policy=PodGroupSchedulingPolicy(gang=GangSchedulingPolicy(1)))


def new_queue(clock=None, *, pre_enqueue=True, **kw) -> PriorityQueue:
    sort = PrioritySort()
    plugins = {"default-scheduler": [AllowList("allow")]} if pre_enqueue else {}
    return PriorityQueue(sort.less, clock or VirtualClock(), sort_key=sort.sort_key, pre_enqueue_plugins=plugins,
                         generic_workload=True, **kw)


def setup_state(q: PriorityQueue, pods, state: str, pg: PodGroup | None = None) -> None:
    """``setupInitialPodGroupState``."""
    pg = pg or pod_group()
    if state != "incomplete":
        q.add_pod_group(pg)
    if not pods:
        return
    for pod in pods:
        q.add(pod)
    if state == "popped":
        assert q.pop() is not None
    elif state == "backoff":
        entity = q._active_q.delete(KEY)
        if entity is not None:
            entity.unschedulable_count = 1
            entity.timestamp = q.clock.now()
            entity.unschedulable_plugins = {"fooPlugin"}
            q._backoff_q.add(entity, "UnscheduledPodAdd")
    elif state == "unschedulable":
        entity = q._active_q.delete(KEY)
        if entity is not None:
            q._unschedulable_pods.add(entity, "UnscheduledPodAdd")
    elif state == "gated":
        entity = q._active_q.delete(KEY)
        if entity is not None:
            entity.gating_plugin, entity.gated = "preEnqueuePlugin", True
            q._unschedulable_pods.add(entity, "UnscheduledPodAdd")


def where_is_group(q: PriorityQueue):
    """(where, entity) of the group's entity."""
    for where, container in (("active", q._active_q), ("backoff", q._backoff_q)):
        entity = container.get(KEY)
        if entity is not None:
            return where, entity
    entity = q._unschedulable_pods.get(KEY)
    return ("unschedulable", entity) if entity is not None else (None, None)


P1, P2, P3 = member("pod1"), member("pod2"), member("pod3")
GATED_P1, GATED_P2, GATED_P3 = member("pod1", allow=False), member("pod2", allow=False), member("pod3", allow=False)


# -- TestAddPodGroupMember ----------------------------------------------------------------------------
@pytest.mark.parametrize("initial,state,incoming,where,pending,incomplete,gated,size", [
    (None, "", P1, "active", False, [], False, 1),
    (None, "", GATED_P1, "unschedulable", False, [], True, 1),
    (P1, "popped", P2, None, True, [], False, 0),
    (P1, "popped", GATED_P2, None, True, [], False, 0),
    (P1, "active", P2, "active", False, [], False, 2),
    (P1, "active", GATED_P2, "unschedulable", False, [], True, 2),
    (P1, "backoff", P2, "backoff", False, [], False, 2),
    (P1, "backoff", GATED_P2, "unschedulable", False, [], True, 2),
    (P1, "unschedulable", P2, "unschedulable", False, [], False, 2),
    (P1, "unschedulable", GATED_P2, "unschedulable", False, [], False, 2),
    (GATED_P1, "gated", P2, "unschedulable", False, [], True, 2),
    (None, "incomplete", P1, None, False, [P1], False, 0),
    (P1, "incomplete", P2, None, False, [P1, P2], False, 0),
], ids=[
    "first member added (ungated), creates new pod group in activeQ",
    "first member added (gated), creates new pod group directly in unschedulableEntities",
    "matching pod group is currently in flight (last popped), pod (ungated) goes to pendingPodGroupPods",
    "matching pod group is currently in flight (last popped), pod (gated) goes to pendingPodGroupPods",
    "existing pod group in activeQ (ungated addition), stays in activeQ",
    "existing pod group in activeQ (gated addition), becomes gated and moves to unschedulableEntities",
    "existing pod group in backoffQ (ungated addition), stays in backoffQ",
    "existing pod group in backoffQ (gated addition), becomes gated and moves to unschedulableEntities",
    "existing pod group in unschedulableEntities (ungated addition), stays in unschedulableEntities as ungated",
    "existing pod group in unschedulableEntities (gated addition), stays in unschedulableEntities as ungated",
    "existing gated pod group in unschedulableEntities (ungated addition), stays in unschedulableEntities as gated",
    "first member added before pod group exists, goes to incompletePodGroupPods",
    "existing pod in incompletePodGroupPods, stays in incompletePodGroupPods",
])
def test_add_pod_group_member(initial, state, incoming, where, pending, incomplete, gated, size):
    q = new_queue()
    setup_state(q, [initial] if initial is not None else [], state)
    q.add(incoming)
    got_where, entity = where_is_group(q)
    assert got_where == where
    if entity is not None:
        assert entity.gated == gated and entity.size() == size
        assert incoming.name in [p.name for p in entity.unscheduled_pods()]
    assert q.pending_pod_group_pods.has(incoming) == pending
    assert all(q.incomplete_pod_group_pods.has(p) for p in incomplete)
    assert len(q.incomplete_pod_group_pods) == len(incomplete)


# -- TestDeletePodGroupMember --------------------------------------------------------------------------
NOT_FOUND = member("pod-not-found")


@pytest.mark.parametrize("initial,state,pending,delete,where,n_pending,incomplete,size", [
    ([P1], "popped", [P2], P2, None, 0, [], 0),
    ([P1, P2, P3], "popped", [P2, P3], P2, None, 1, [], 0),
    ([P1], "active", [], P1, None, 0, [], 0),
    ([P1, P2], "active", [], P2, "active", 0, [], 1),
    ([P1], "backoff", [], P1, None, 0, [], 0),
    ([P1, P2], "backoff", [], P2, "backoff", 0, [], 1),
    ([P1], "unschedulable", [], P1, None, 0, [], 0),
    ([P1, P2], "unschedulable", [], P2, "unschedulable", 0, [], 1),
    ([P1], "active", [], NOT_FOUND, "active", 0, [], 1),
    ([P1, GATED_P2], "gated", [], GATED_P2, "unschedulable", 0, [], 1),
    ([P1, GATED_P2, GATED_P3], "gated", [], GATED_P2, "unschedulable", 0, [], 2),
    ([P1], "incomplete", [], P1, None, 0, [], 0),
    ([P1, P2], "incomplete", [], P1, None, 0, [P2], 0),
], ids=[
    "delete from pendingPodGroupPods (group in flight)",
    "delete one pending pod where there are more pending pods for a group in flight",
    "delete the only pod of a group in activeQ, completely removes group",
    "delete one pod of a size-2 group in activeQ, decreases size and keeps in activeQ",
    "delete the only pod of a group in backoffQ, completely removes group",
    "delete one pod of a size-2 group in backoffQ, keeps group in backoffQ",
    "delete the only pod of a group in unschedulableEntities, completely removes group",
    "delete one pod of a size-2 group in unschedulableEntities, decreases size and keeps in unschedulableEntities",
    "delete a pod that doesn't exist in any queue or pending map",
    "delete the only gated pod from a group, ungates the pod group",
    "delete one gated pod from a group where another gated pod remains, group stays gated",
    "delete from incompletePodGroupPods",
    "delete one pod from incompletePodGroupPods with multiple pods",
])
def test_delete_pod_group_member(initial, state, pending, delete, where, n_pending, incomplete, size):
    q = new_queue()
    setup_state(q, initial, state)
    for pod in pending:
        q.add(pod)
    q.delete(delete)
    got_where, entity = where_is_group(q)
    assert got_where == where
    if entity is not None:
        assert entity.size() == size and delete.name not in [p.name for p in entity.unscheduled_pods()]
    assert len(q.pending_pod_group_pods) == n_pending and not q.pending_pod_group_pods.has(delete)
    assert all(q.incomplete_pod_group_pods.has(p) for p in incomplete)
    assert len(q.incomplete_pod_group_pods) == len(incomplete)


# -- TestAddAttemptedPodGroupIfNeeded ---------------------------------------------------------------------
A1, A2 = member("pod1", priority=100), member("pod2", priority=100)


def _pinfo(q, pod, *plugins):
    pinfo = QueuedPodInfo(PodInfo(pod), q.clock.now())
    pinfo.unschedulable_plugins = set(plugins)
    return pinfo


ERROR, UNSCHEDULABLE = Status(Code.ERROR), Status(Code.UNSCHEDULABLE)


@pytest.mark.parametrize("pending,status,no_backoff,blocked,errors_before,unsched,errors,where,size,preserved", [
    ([], None, False, False, 0, 0, 0, None, 1, False),
    ([("pod1", ()), ("pod2", ())], ERROR, True, False, 0, 0, 1, "active", 2, False),
    ([("pod1", ("fakePlugin",)), ("pod2", ())], UNSCHEDULABLE, True, False, 5, 1, 0, "active", 2, False),
    ([("pod1", ("fakePlugin",)), ("pod2", ())], UNSCHEDULABLE, True, True, 0, 1, 0, "unschedulable", 2, False),
    ([("pod1", ()), ("pod2", ())], ERROR, False, False, 0, 0, 1, "backoff", 2, False),
    ([("pod1", ("fakePlugin",)), ("pod2", ())], UNSCHEDULABLE, False, False, 5, 1, 0, "backoff", 2, False),
    ([("pod1", ()), ("pod2", ())], ERROR, False, True, 0, 0, 1, "unschedulable", 2, False),
    ([("pod1", ("fakePlugin",)), ("pod2", ())], None, False, False, 0, 0, 0, "active", 2, True),
    ([("pod2", ())], None, False, False, 0, 0, 0, "active", 1, False),
], ids=[
    "No pending pods, pod group is not enqueued",
    "Pods present, pod group scheduling had an error, and pod group not backing off",
    "Pods present, pod group scheduling result is unschedulable, and pod group not backing off",
    "Pods present, pod group scheduling result is unschedulable, and pod group not backing off, but blocked on "
    "PreEnqueue",
    "Pods present, pod group scheduling result is Error, and pod group backing off",
    "Pods present, pod group scheduling result is Unschedulable, and pod group backing off",
    "Pods present, pod group scheduling result is Error, and pod group backing off, but blocked on PreEnqueue",
    "Unschedulable pods are present but pod group scheduling was successful, requeue to active queue directly "
    "and preserve timestamp",
    "New pods only are present and pod group scheduling was successful, requeue to active queue directly with "
    "new timestamp",
])
def test_add_attempted_pod_group_if_needed(pending, status, no_backoff, blocked, errors_before, unsched, errors,
                                           where, size, preserved):
    clock = VirtualClock(1000.0)
    kw = {"pod_initial_backoff": 0, "pod_max_backoff": 0} if no_backoff else {}
    sort = PrioritySort()
    q = PriorityQueue(sort.less, clock, sort_key=sort.sort_key, generic_workload=True,
                      pre_enqueue_plugins={"default-scheduler": [AllowList()]} if blocked else {}, **kw)
    pg = pod_group("test-pg")
    q.add_pod_group(pg)
    pg_info = QueuedPodGroupInfo(pg)
    first = _pinfo(q, A1.replace(scheduling_group=PodSchedulingGroup("test-pg")))
    pg_info.add_pod(first)
    pg_info.timestamp = first.timestamp
    old_timestamp = pg_info.timestamp
    pg_info.consecutive_errors_count = errors_before
    pods = {"pod1": A1, "pod2": A2}
    for name, plugins in pending:
        q.pending_pod_group_pods.add(_pinfo(q, pods[name].replace(scheduling_group=PodSchedulingGroup("test-pg")),
                                            *plugins))
    clock.advance(1.0)
    assert q.add_attempted_pod_group_if_needed(pg_info, q.scheduling_cycle(), status) is None
    queued = q.get_pod_group("ns1", "test-pg")
    if queued is not None:
        pg_info = queued
    if preserved:
        assert pg_info.timestamp == old_timestamp
    elif where is not None:
        assert pg_info.timestamp == clock.now()
    assert (pg_info.unschedulable_count, pg_info.consecutive_errors_count) == (unsched, errors)
    key = "podgroup/ns1/test-pg"
    got = ("active" if key in q._active_q else "backoff" if q._backoff_q.has(key)
           else "unschedulable" if key in q._unschedulable_pods else None)
    assert got == where
    assert len(q.pending_pod_group_pods) == 0
    assert pg_info.size() == size


def test_add_attempted_pod_group_already_queued():
    q = new_queue()
    setup_state(q, [P1], "active")
    err = q.add_attempted_pod_group_if_needed(q.get_pod_group("ns1", PG), 1, None)
    assert str(err) == f"pod group ns1/{PG} is already present in the active queue"


# -- a group's cycle through the queue: pop, failed members pending, requeue ----------------------------
def test_pop_puts_every_member_in_flight_in_one_cycle():
    q = new_queue()
    setup_state(q, [P2, P1], "active")
    entity = q.pop()
    assert isinstance(entity, QueuedPodGroupInfo) and q.scheduling_cycle() == 1
    assert [p.name for p in entity.unscheduled_pods()] == ["pod1", "pod2"]  # same time: by name
    assert entity.attempts == 1 and all(m.attempts == 1 for m in entity.members)
    assert {p.name for p in q.in_flight_pods()} == {"pod1", "pod2"}
    assert q.last_popped_entity == KEY
    # a member's failed attempt (addUnschedulablePodGroupMember): pending while the group is in flight
    failed = entity.members[0]
    failed.unschedulable_plugins.add("NodeResourcesFit")
    assert q.add_unschedulable_if_not_present(failed, q.scheduling_cycle()) is None
    assert q.pending_pod_group_pods.has(failed.pod) and not q.in_flight(failed.pod.uid)
    assert failed.unschedulable_count == 1
    # a new member meanwhile waits too
    q.add(P3)
    assert q.pending_pod_group_pods.has(P3)
    q.done(entity.members[1].pod.uid)
    assert q.add_attempted_pod_group_if_needed(entity, q.scheduling_cycle(), Status(Code.UNSCHEDULABLE)) is None
    requeued = q.get_pod_group("ns1", PG)
    assert requeued.unschedulable_count == 1 and requeued.size() == 2 and q.last_popped_entity is None
    assert q.where(P3.uid) == q.where(failed.pod.uid) == "backoff"


def test_member_order():
    """PodGroupMemberPodsOrderingFunc: priority desc, attempts desc, timestamp asc, name asc."""
    infos = []
    for name, priority, attempts, ts in [("b", 0, 0, 1.0), ("a", 0, 0, 1.0), ("c", 5, 0, 3.0), ("d", 0, 2, 9.0),
                                         ("e", 0, 0, 0.5)]:
        pinfo = QueuedPodInfo(PodInfo(member(name, priority=priority)), ts)
        pinfo.attempts = attempts
        infos.append(pinfo)
    entity = QueuedPodGroupInfo(pod_group())
    for pinfo in infos:
        entity.add_pod(pinfo)
    assert [p.name for p in entity.unscheduled_pods()] == ["c", "d", "e", "a", "b"]
    assert sorted(infos, key=member_order_key) == entity.members


@pytest.mark.parametrize("seed", range(40))
def test_members_added_one_by_one_keep_the_order_of_a_bisect_insertion(seed):
    """QueuedPodGroupInfo.add_pod appends a member that sorts after the last one (a gang arriving
    in order) instead of bisecting: on random arrival sequences (mostly in order, some members of
    another priority, attempts or timestamp, names out of order) the members are those of the plain
    insertion, ``bisect.insort`` by ``member_order_key``. (Fails with the append taken whenever the
    new member sorts at or after the first one.)"""
    import bisect
    import random
    rng = random.Random(seed)
    entity = QueuedPodGroupInfo(pod_group())
    plain: list = []
    t = 0.0
    for i in range(rng.randrange(1, 60)):
        r = rng.random()
        t += 0.0 if r < 0.3 else 1.0
        ts = t if r < 0.85 else rng.uniform(0.0, t)  # now and then an older timestamp
        name = f"m{i:03d}" if rng.random() < 0.8 else f"m{rng.randrange(1000):03d}x{i}"
        pinfo = QueuedPodInfo(PodInfo(member(name, priority=rng.choice([None, None, None, 0, 3]))), ts)
        pinfo.attempts = rng.choice([0, 0, 0, 0, 1, 2])
        entity.add_pod(pinfo)
        plain.insert(bisect.bisect_left(plain, member_order_key(pinfo), key=member_order_key), pinfo)
        assert entity.members == plain


@pytest.mark.parametrize("seed", range(30))
def test_clearing_the_flushed_flag_leaves_every_member_as_the_walk_over_them(seed):
    """``SetWasFlushedFromUnschedulable(false)`` skips the walk over the members while every one
    is known clear (``_members_clear``; a gated gang clears the flag at each member's arrival): on
    random sequences of flag writes, members joining (some with their own flag set, as a pod
    flushed before it joined), leaving and kept by a subset, every member's flag equals that of
    the same sequence with the walk always taken. (Fails when a member joining with its flag set
    leaves the entity clear, or when setting the flag does not mark the entity.)"""
    import random
    rng = random.Random(seed)
    fast, plain = QueuedPodGroupInfo(pod_group()), QueuedPodGroupInfo(pod_group())

    def flags(entity):
        return [(m.pod.name, m.was_flushed_from_unschedulable) for m in entity.members]

    for i in range(rng.randrange(5, 80)):
        r = rng.random()
        if r < 0.45:
            pod = member(f"m{i:03d}")
            flushed = rng.random() < 0.2
            for entity in (fast, plain):
                pinfo = QueuedPodInfo(PodInfo(pod), float(i))
                pinfo.was_flushed_from_unschedulable = flushed
                entity.add_pod(pinfo)
        elif r < 0.8:
            flushed = rng.random() < 0.25
            fast.was_flushed_from_unschedulable = flushed
            plain._members_clear = False  # the reference: always the walk
            plain.was_flushed_from_unschedulable = flushed
        elif r < 0.9 and fast.members:
            gone = rng.choice(fast.members).pod
            fast.remove_pod(gone)
            plain.remove_pod(gone)
        else:
            keep = {m.pod.name for m in fast.members if rng.random() < 0.7}
            for entity in (fast, plain):
                entity.set_members([m for m in entity.members if m.pod.name in keep])
        assert fast.was_flushed_from_unschedulable == plain.was_flushed_from_unschedulable
        assert flags(fast) == flags(plain)


def test_pod_group_keys_are_kept_equal_and_bounded():
    """pod_group_key's memo hands out keys equal to fresh EntityKeys, per namespace and name, and
    starts over beyond its bound."""
    from fastsched.framework import podgroups
    from fastsched.framework.podgroups import EntityKey, pod_group_key
    for ns, name in [("ns1", "a"), ("ns2", "a"), ("ns1", "b"), ("ns1", "a")]:
        key = pod_group_key(ns, name)
        assert key == EntityKey("podgroup", ns, name) and type(key) is EntityKey and str(key) == f"podgroup/{ns}/{name}"
    assert pod_group_key("ns1", "a") is pod_group_key("ns1", "a")
    for i in range(podgroups._KEYS_MAX + 5):
        assert pod_group_key("nsx", f"g{i}").name == f"g{i}"
    assert len(podgroups._KEYS) <= podgroups._KEYS_MAX


def test_event_answers_kept_per_event_are_those_computed_afresh():
    """The queue keeps an event's label, whether it is a wildcard and each gating plugin's interest
    per event (by identity); the answers are those of event_label, cluster_event_is_wildcard and
    match_any_cluster_event, for the module's events and for events built per call (equal, not
    identical)."""
    from fastsched.framework.events import cluster_event_is_wildcard, event_label, match_any_cluster_event
    from fastsched.framework.interface import ActionType, ClusterEvent, EventResource
    q = new_queue()
    q._plugin_to_events = {"A": [ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.ADD)],
                           "B": [ClusterEvent(EventResource.POD_GROUP, ActionType.UPDATE)]}
    events = [ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.ADD),
              ClusterEvent(EventResource.POD_GROUP, ActionType.ADD),
              ClusterEvent(EventResource.POD_GROUP, ActionType.UPDATE),
              ClusterEvent(EventResource.ASSIGNED_POD, ActionType.ADD, label="custom"),
              ClusterEvent(EventResource.WILDCARD, ActionType.ALL, label="UnschedulableTimeout")]
    for _ in range(2):
        for template in events:
            for event in (template, ClusterEvent(template.resource, template.action_type, label=template.label)):
                assert q._event_label(event) == event_label(event)
                assert q._is_wildcard(event) == cluster_event_is_wildcard(event)
                for plugin in ("A", "B", "C"):
                    assert q._gating_interested(plugin, event, {}) == match_any_cluster_event(
                        event, q._plugin_to_events.get(plugin, []))


def test_group_priority_and_foreign_pods():
    entity = QueuedPodGroupInfo(pod_group().replace(priority=7))
    assert entity.priority == 7 and entity.key_string == KEY
    entity.add_pod(QueuedPodInfo(PodInfo(member("x", group="other"))))
    entity.add_pod(QueuedPodInfo(PodInfo(make_pod("y", namespace="ns1"))))
    assert entity.size() == 0
    with pytest.raises(KeyError, match=r"^'pod ns1/x to update not found in the queued group info'$"):
        entity.update(member("x"))


# -- TestActivatePodGroupMember ---------------------------------------------------------------------
@pytest.mark.parametrize("state,where", [("backoff", "active"), ("unschedulable", "active"), ("active", "active"),
                                         ("incomplete", None)])
def test_activate_pod_group_member(state, where):
    q = new_queue()
    setup_state(q, [P1, P2], state)
    q.activate([P2])
    assert where_is_group(q)[0] == where
    if state == "incomplete":
        assert len(q.incomplete_pod_group_pods) == 2


def test_activating_many_members_of_one_group_moves_it_once_and_remembers_each_in_flight_member():
    """Activate over a gang's members (GangScheduling's Permit passes every other member): the group
    moves once; a member in flight gets its ForceActivate event each, as upstream's loop records it
    after the second activation of the root finds nothing to move; a member whose PodGroup the
    queue has not seen is skipped (upstream ``continue``s without recording an event)."""
    q = new_queue()
    setup_state(q, [P1, P2], "backoff")
    moved = []
    original = q._activate_entity
    q._activate_entity = lambda uid, *a: moved.append(uid) or original(uid, *a)
    q.activate([P1, P2])
    assert moved == [KEY] and where_is_group(q)[0] == "active"

    q = new_queue()
    setup_state(q, [P1, P2], "popped")
    before = {m.pod.uid: q._active_q.cluster_events_for_pod(m) for m in map(q._new_queued_pod_info, (P1, P2))}
    q.activate([P1, P2, member("orphan", group="unseen")])
    for m in map(q._new_queued_pod_info, (P1, P2)):
        events = q._active_q.cluster_events_for_pod(m)[len(before[m.pod.uid]):]
        assert [(e.new_obj.uid, e.event) for e in events] == [(m.pod.uid, EVENT_FORCE_ACTIVATE)]
    # (kept per member, not as N events per activation in the shared list: a gang of N has N^2)
    assert not any(e.event is EVENT_FORCE_ACTIVATE for e in q.in_flight_events())


def test_activating_a_groups_unscheduled_pods_view_marks_as_the_loop_over_its_pods():
    skipped = [_random_activations(seed) for seed in range(60)]
    assert sum(1 for n in skipped if n) >= 30  # (the walk is skipped in most sequences)


def _random_activations(seed: int) -> int:
    """GangScheduling's Permit activates ``state.unscheduled_pods()`` on every member's Permit; the
    queue recognises the view and skips the walk over the members when nothing was added to the
    state and no pod went in flight since its last walk. Two queues go through the same random
    steps (members added, popped with their group, assumed, forgotten, done, replaced; the group
    requeued), one activating the view and one the view's pods as a list: every ForceActivate
    mark (with its pod object) and where the group is stay equal."""
    import random

    from fastsched.framework.podgroups import PodGroupState, UnscheduledPods

    rng = random.Random(seed)
    queues = [new_queue(), new_queue()]
    state = PodGroupState()
    state.set_pod_group(pod_group())
    for q in queues:
        q.add_pod_group(pod_group())
    names = iter(f"m{i:03d}" for i in range(1000))
    skipped = 0
    for step in range(40):
        r = rng.random()
        if r < 0.25 or not state.all_pods:
            pod = member(next(names))
            state.add_pod(pod)
            for q in queues:
                q.add(pod)
        elif r < 0.35:
            for q in queues:
                popped = q.pop()
                if popped is not None and popped.pod is None:
                    q.add_attempted_pod_group_if_needed(popped, q.scheduling_cycle(), None)
        elif r < 0.55 and state.unscheduled:
            uid = rng.choice(list(state.unscheduled))
            state.assume_pod(state.all_pods[uid].replace(node_name="node-1"))
        elif r < 0.65 and state.assumed:
            state.forget_pod(rng.choice(list(state.assumed)))
        elif r < 0.75:
            uid = rng.choice(list(state.all_pods))
            for q in queues:
                q.done(uid)
        elif r < 0.8 and state.unscheduled:
            uid = rng.choice(list(state.unscheduled))
            old = state.all_pods[uid]
            state.update_pod(old, old.replace(labels={**old.labels, "v": str(step)}))
        view = state.unscheduled_pods()
        assert isinstance(view, UnscheduledPods) and list(view.values()) == [state.all_pods[u] for u in state.unscheduled]
        memo_before = state.activation_memo
        queues[0].activate(view)
        queues[1].activate(list(view.values()))
        skipped += memo_before is not None and memo_before == state.activation_memo and len(view) > 1
        a, b = (q._active_q._force_activated for q in queues)
        assert {u: id(p) for u, p in a.items()} == {u: id(p) for u, p in b.items()}, (seed, step)
        assert where_is_group(queues[0])[0] == where_is_group(queues[1])[0]
    return skipped


class PerGroupGate:
    """A PreEnqueue plugin answering per pod group (as GangScheduling): gated below ``need`` members."""

    pre_enqueue_per_pod_group = True

    def __init__(self, need: int):
        self.need, self.members, self.calls = need, 0, 0

    def name(self) -> str:
        return "PerGroupGate"

    def pre_enqueue(self, pod):
        self.calls += 1
        if self.members < self.need:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"{self.members} of {self.need} members")
        return None


def gated_queue(*plugins) -> PriorityQueue:
    """A queue whose profile runs ``plugins`` at PreEnqueue, as the framework wraps them."""
    from fastsched.runtime.framework import _CheckedPreEnqueue

    sort = PrioritySort()
    return PriorityQueue(sort.less, VirtualClock(), sort_key=sort.sort_key, generic_workload=True,
                         pre_enqueue_plugins={"default-scheduler": [_CheckedPreEnqueue(p) for p in plugins]})


def test_a_per_pod_group_pre_enqueue_plugin_is_asked_once_per_pass_over_a_group():
    gate = PerGroupGate(3)
    q = gated_queue(gate)
    q.add_pod_group(pod_group())
    gate.members = 2
    for pod in (P1, P2, P3):
        q.add(pod)
    entity = q.get_pod_group("ns1", PG)
    assert where_is_group(q)[0] == "unschedulable" and entity.gated
    for members, gated in ((2, True), (3, False)):
        gate.members = members
        before = gate.calls
        q._run_pre_enqueue_plugins_for_group(entity)
        assert gate.calls - before == 1  # one pass over the group's three members, one question
        assert entity.gated is gated
        assert [(m.gating_plugin, m.gating_message) for m in entity.members] == \
            [("PerGroupGate", "2 of 3 members") if gated else ("", "")] * 3


@pytest.mark.parametrize("seed", range(30))
def test_a_pass_over_a_gated_group_answers_as_each_member_running_its_plugins(seed):
    """The pass over a group gated by a per-group plugin takes that plugin's answer for the members
    it gates without running their plugins one by one (the members of a gang are passed over on
    every member added). Against the plain loop (each member's plugins, the per-group answer asked
    once): every member's gating plugin, message, gated flag and rejectors, and the group's, on
    random groups (members allowed or not by a per-pod plugin, before and after the gate opens)."""
    import random

    rng = random.Random(seed)
    gate = PerGroupGate(rng.randint(1, 6))
    order = [AllowList("allow"), gate] if rng.random() < 0.5 else [gate, AllowList("allow")]
    q = gated_queue(*order)
    q.add_pod_group(pod_group())
    n = rng.randint(1, 6)
    gate.members = rng.randint(0, n)
    for i in range(n):
        q.add(member(f"m{i}", allow=rng.random() < 0.8, priority=rng.randint(0, 2)))
    entity = q.get_pod_group("ns1", PG)
    for members in (gate.members, rng.randint(0, n + 1)):
        gate.members = members
        want = _plain_pass(q, entity)
        q._run_pre_enqueue_plugins_for_group(entity)
        assert _gating_state(entity) == _gating_state(want)


def _gating_state(e):
    return ([(m.pod.name, m.gating_plugin, m.gating_message, m.gated, sorted(m.unschedulable_plugins))
             for m in e.members], e.gating_plugin, e.gating_message, e.gated)


def _plain_pass(q, entity):
    """The pass as a plain loop (each member's plugins, per-group answers asked once), on a copy."""
    import copy

    reference = copy.deepcopy(entity)
    memo: dict = {}
    gated = None
    for m in reference.members:
        q._run_pre_enqueue_plugins(m, memo)
        if m.gating_plugin:
            gated = m
    reference.gating_plugin = "" if gated is None else gated.gating_plugin
    reference.gating_message = "" if gated is None else gated.gating_message
    reference.gated = gated is not None
    return reference


def test_passes_over_a_gang_growing_one_member_at_a_time_answer_as_the_plain_loop():
    used = [_random_pass_sequence(seed) for seed in range(40)]
    assert sum(1 for u in used if u) >= 30  # (most sequences go through the memo)


def _random_pass_sequence(seed: int) -> int:
    """The pass keeps a memo (QueuedPodGroupInfo.held / fresh) so that a gang's members arriving
    one by one are not all passed over again on each arrival. After every step of a random
    sequence (members added at random places in member order, some refused by a per-pod plugin;
    members updated and deleted; the per-group gate opening and closing; the group popped and
    requeued) a pass leaves each member and the group as the plain loop from the same state."""
    import random

    rng = random.Random(seed)
    gate = PerGroupGate(rng.randint(2, 10))
    order = [AllowList("allow"), gate] if rng.random() < 0.5 else [gate, AllowList("allow")]
    q = gated_queue(*order)
    q.add_pod_group(pod_group())
    pods: dict[str, object] = {}
    used_memo = 0
    for step in range(30):
        entity = q.get_pod_group("ns1", PG)
        r = rng.random()
        if entity is None or r < 0.55:
            name = f"m{rng.randint(0, 99):02d}"
            if name in pods:
                continue
            pods[name] = pod = member(name, allow=rng.random() < 0.85, priority=rng.choice([0, 0, 1, 2]))
            gate.members = min(gate.members + 1, len(pods)) if rng.random() < 0.8 else gate.members
            q.add(pod)
        elif r < 0.65 and entity.members:
            old = rng.choice(entity.members).pod
            new = member(old.name, allow="allow" not in old.labels, priority=old.priority)
            pods[old.name] = new
            q.update(old, new)
        elif r < 0.72 and entity.members:
            pod = rng.choice(entity.members).pod
            del pods[pod.name]
            q.delete(pod)
        elif r < 0.85:
            gate.members = rng.randint(0, len(pods) + 1)
            used_memo += entity.held is not None
            q._run_pre_enqueue_plugins_for_group(entity)
        else:
            popped = q.pop()
            if popped is not None and popped.pod is None and rng.random() < 0.5:
                q.park_pod_group(popped)  # (the same entity back, its members' rejectors cleared)
            elif popped is not None and popped.pod is None:
                q.add_attempted_pod_group_if_needed(popped, q.scheduling_cycle(), Status(Code.UNSCHEDULABLE, "x"))
                for m in popped.members:
                    q.done(m.pod.uid)
                for m in popped.members:
                    q.add(pods[m.pod.name]) if m.pod.name in pods else None
        entity = q.get_pod_group("ns1", PG)
        if entity is None:
            continue
        if rng.random() < 0.3:
            gate.members = rng.randint(0, len(pods) + 1)
        want = _plain_pass(q, entity)
        used_memo += entity.held is not None
        q._run_pre_enqueue_plugins_for_group(entity)
        assert _gating_state(entity) == _gating_state(want), (seed, step)
    return used_memo


@pytest.mark.parametrize("seed", range(60))
def test_is_entity_worth_requeuing_stops_only_when_no_member_with_pending_plugins_is_left(seed):
    """isEntityWorthRequeuing asks the members in order; once one answered, only members with
    pending plugins can change the answer, and the entity counts them (members_with_pending) so
    that the walk over a gang's members stops early. Against the plain loop, on random members
    (added, removed, the entity's members replaced) with random answers: the same strategy, and
    never more questions."""
    import random

    from fastsched.scheduler.backend.queue.scheduling_queue import QUEUE_IMMEDIATELY, QUEUE_SKIP

    rng = random.Random(seed)
    q = new_queue()
    entity = QueuedPodGroupInfo(pod_group())
    answers: dict[str, int] = {}
    for i in range(rng.randint(1, 12)):
        pinfo = q._new_queued_pod_info(member(f"m{i:02d}", priority=rng.choice([0, 1])))
        if rng.random() < 0.25:
            pinfo.pending_plugins = {"fooPlugin"}
        pinfo.unschedulable_plugins = {"barPlugin"}
        answers[pinfo.pod.name] = rng.choice([0, 0, 1, 2])
        entity.add_pod(pinfo)
    if rng.random() < 0.3 and entity.members:
        entity.remove_pod(rng.choice(entity.members).pod)
    if rng.random() < 0.3:
        entity.set_members([m for m in entity.members if rng.random() < 0.7])
    asked: list[str] = []

    def answer(pinfo, event, old, new):
        asked.append(pinfo.pod.name)
        return answers[pinfo.pod.name]

    q._is_pod_worth_requeuing = answer
    got = q._is_entity_worth_requeuing(entity, None, None, None)
    got_asked, asked[:] = list(asked), []
    want = QUEUE_SKIP  # the plain loop
    for m in entity.members:
        if want and not m.pending_plugins:
            continue
        want = max(want, answer(m, None, None, None))
        if want == QUEUE_IMMEDIATELY:
            break
    assert got == want
    assert len(got_asked) <= len(asked) and got_asked == asked[:len(got_asked)]
    assert entity.members_with_pending == sum(1 for m in entity.members if m.pending_plugins)


# -- TestAddPodGroup / TestUpdatePodGroup / TestDeletePodGroup --------------------------------------
def test_add_pod_group_moves_incomplete_members():
    q = new_queue()
    setup_state(q, [P1, GATED_P2], "incomplete")
    assert len(q.incomplete_pod_group_pods) == 2 and where_is_group(q) == (None, None)
    q.add_pod_group(pod_group())
    where, entity = where_is_group(q)
    assert where == "unschedulable" and entity.gated and entity.size() == 2
    assert len(q.incomplete_pod_group_pods) == 0


def test_update_pod_group_updates_the_entity():
    q = new_queue()
    setup_state(q, [P1], "active")
    new = pod_group().replace(priority=3)
    q.update_pod_group(new)
    assert q.get_pod_group("ns1", PG).pod_group is new and q.get_pod_group("ns1", PG).priority == 3


@pytest.mark.parametrize("state", ["active", "backoff", "unschedulable", "popped"])
def test_delete_pod_group_decomposes_the_entity(state):
    q = new_queue()
    setup_state(q, [P1, P2], state)
    if state == "popped":
        q.add(P3)  # pending while in flight
    q.delete_pod_group(pod_group())
    assert where_is_group(q) == (None, None)
    expected = 1 if state == "popped" else 2
    assert len(q.incomplete_pod_group_pods) == expected and len(q.pending_pod_group_pods) == 0


# -- group backoff (calculateBackoffDuration) -----------------------------------------------------------
@pytest.mark.parametrize("count,size,expected", [
    (1, 1, 1.0), (4, 1, 8.0), (5, 1, 10.0), (5, 4, 16.0), (6, 4, 20.0), (6, 9, 30.0), (1, 9, 1.0),
])
def test_group_backoff_duration(count, size, expected):
    q = new_queue()
    entity = QueuedPodGroupInfo(pod_group())
    for i in range(size):
        entity.add_pod(QueuedPodInfo(PodInfo(member(f"m{i}"))))
    entity.unschedulable_count = count
    assert q.backoff_duration(entity) == pytest.approx(expected)


# -- pod_group_member_pods_test.go ------------------------------------------------------------------
def test_pod_group_member_pods():
    pods = PodGroupMemberPods()
    a1, a2, b1 = member("a1", group="a"), member("a2", group="a"), member("b1", group="b")
    for pod in (a1, a2, b1):
        pods.add(QueuedPodInfo(PodInfo(pod)))
    assert len(pods) == 3 and pods.has(a1) and not pods.has(member("a1", group="b"))
    assert pods.get(a2).pod is a2
    updated = a2.replace(labels={"x": "y"})
    assert pods.update(updated).pod is updated and pods.update(member("zz", group="a")) is None
    assert pods.delete(a1).pod is a1 and pods.delete(a1) is None and len(pods) == 2
    assert [p.pod.name for p in pods.clear("ns1", "a")] == ["a2"] and pods.clear("ns1", "a") == []
    assert pods.list() == [b1]


def test_gate_off_queues_members_as_pods():
    sort = PrioritySort()
    q = PriorityQueue(sort.less, VirtualClock(), sort_key=sort.sort_key)
    q.add(P1)
    assert q.where(P1.uid) == "active" and q.pop().pod is P1
