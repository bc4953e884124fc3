"""PodGroupState and the cache's pod group bookkeeping (GenericWorkload).

Transcribed: ``pkg/scheduler/backend/cache/podgroupstate_test.go`` (``TestPodGroupState_*``, the
composite-group test excepted) and the pod group tests of ``cache_test.go``
(``Test_AddPodGroupMember``, ``Test_UpdatePodGroupMember``, ``Test_RemovePodGroupMember``,
``Test_UpdatePodGroup``, ``Test_RemovePodGroup`` and ``Test_AddPodGroup`` without their composite
cases, ``TestBindingPodGroupMember``), each with GenericWorkload on and off.
"""
from __future__ import annotations

import pytest

from fastsched.api.objects import PodSchedulingGroup
from fastsched.api.scheduling import GangSchedulingPolicy, PodGroup, PodGroupSchedulingPolicy
from fastsched.framework.podgroups import EntityKey, PodGroupState, PodGroupStateError, pod_group_key
from fastsched.scheduler.cache import Cache
from fastsched.testing import make_node, make_pod


def member(name: str, group: str = "pg", *, uid: str | None = None, node: str = "", ns: str = "ns1", labels=None):
    pod = make_pod(name, namespace=ns, labels=labels).replace(uid=uid or name,
                                                               scheduling_group=PodSchedulingGroup(group))
    return pod.with_node_name(node) if node else pod


def pod_group(name: str = "pg", ns: str = "ns1", min_count: int = 1) -> PodGroup:
    return PodGroup(name=name, namespace=ns,
                    scheduling_policy=PodGroupSchedulingPolicy(gang=GangSchedulingPolicy(min_count)))


# -- podgroupstate_test.go ------------------------------------------------------------------------
def test_assume_forget():
    pgs = PodGroupState()
    pod = member("p1")
    pgs.add_pod(pod)
    assert pod.uid not in pgs.assumed_pod_uids() and pod.uid in pgs.unscheduled
    pgs.assume_pod(pod)
    assert pod.uid in pgs.assumed_pod_uids() and pod.uid not in pgs.unscheduled
    pgs.forget_pod(pod.uid)
    assert pod.uid not in pgs.assumed_pod_uids() and pod.uid in pgs.unscheduled


def test_clone():
    pgs = PodGroupState()
    pod1, pod2 = member("p1"), member("p2")
    pgs.add_pod(pod1)
    pgs.add_pod(pod2)
    pgs.assume_pod(pod2)
    snap = pgs.clone()
    assert snap.generation == pgs.generation
    assert {pod1.uid, pod2.uid} <= set(snap.all_pod_uids())
    assert pod1.name in snap.unscheduled_pods() and pod2.uid in snap.assumed_pod_uids()
    snap.assume_pod(pod1)
    assert pod1.uid not in pgs.assumed
    pod3 = member("p3")
    pgs.add_pod(pod3)
    assert pod3.uid not in snap.all_pod_uids()


def test_pod_counts():
    pgs = PodGroupState()
    pod1, pod2, pod3, pod4 = member("p1"), member("p2"), member("p3", node="node1"), member("p4")
    assert (pgs.all_pods_count(), pgs.scheduled_pods_count()) == (0, 0)
    for pod in (pod1, pod2, pod3):
        pgs.add_pod(pod)
    assert (pgs.all_pods_count(), pgs.scheduled_pods_count()) == (3, 1)
    steps = [
        (lambda: pgs.assume_pod(pod1), 2),    # unscheduled -> assumed
        (lambda: pgs.assume_pod(pod3), 2),    # already scheduled: no change
        (lambda: pgs.assume_pod(pod4), 2),    # not in the state: no change
        (lambda: pgs.forget_pod(pod3.uid), 2),  # assigned: no change
        (lambda: pgs.forget_pod(pod1.uid), 1),  # assumed -> unscheduled
        (lambda: pgs.forget_pod(pod1.uid), 1),  # not assumed: no change
        (lambda: pgs.assume_pod(pod2), 2),
        (lambda: pgs.forget_pod(pod4.uid), 2),  # not in the state: no change
    ]
    for step, scheduled in steps:
        step()
        assert (pgs.all_pods_count(), pgs.scheduled_pods_count()) == (3, scheduled)


def test_scheduled_pods():
    pgs = PodGroupState()
    unscheduled, assumed, assigned = member("p1", ns="ns"), member("p2", ns="ns"), member("p3", ns="ns", node="node1")
    for pod in (assigned, unscheduled, assumed):
        pgs.add_pod(pod)
    assumed_on_node = assumed.with_node_name("node2")
    pgs.assume_pod(assumed_on_node)
    scheduled = pgs.scheduled_pods()
    snapshot = pgs.clone()
    pgs.assume_pod(unscheduled)
    assert scheduled == [assigned, assumed_on_node]
    assert snapshot.scheduled_pods() == [assigned, assumed_on_node]


# -- cache_test.go ----------------------------------------------------------------------------------
@pytest.fixture(params=[True, False], ids=["GenericWorkload", "off"])
def enabled(request):
    return request.param


def _cache(enabled: bool) -> Cache:
    cache = Cache(generic_workload=enabled)
    cache.add_node(make_node("node1"))
    cache.add_node(make_node("node2"))
    return cache


@pytest.mark.parametrize("pod,has_state,unscheduled,assigned,init_group", [
    (make_pod("non-workload-pod", namespace="namespace"), False, False, False, False),
    (member("unscheduled-pod", ns="namespace"), True, True, False, False),
    (member("assigned-pod", ns="namespace", node="node1"), True, False, True, False),
    (member("assigned-pod", ns="namespace", node="node1"), True, False, True, True),
], ids=["add pod with no pod group name", "add unscheduled pod group member", "add assigned pod group member",
        "add assigned pod group member when state already exists (from PodGroup object)"])
def test_add_pod_group_member(enabled, pod, has_state, unscheduled, assigned, init_group):
    cache = _cache(enabled)
    if init_group:
        cache.add_pod_group(pod_group(ns="namespace"))
    cache.add_pod_group_member(pod)
    if not enabled or not has_state:
        assert cache.pod_group_states == {}
        return
    state = cache.pod_group_states_lister().get(pod.namespace, pod.pod_group_name)
    assert (pod.name in state.unscheduled_pods()) == unscheduled
    assert (pod.uid in state.assigned_pod_uids()) == assigned


def test_update_pod_group_member(enabled):
    pod = member("unscheduled-pod", uid="pod1", ns="namespace")
    updated = member("unscheduled-pod", uid="pod1", ns="namespace", labels={"foo": "bar"})
    assigned = member("assigned-pod", uid="pod2", ns="namespace", node="node")
    cases = [  # (old, new, unscheduled, assigned)
        (pod, updated, True, False),     # "update a pod group member, add label"
        (pod, assigned, False, True),    # "update an unscheduled pod group member, set NodeName"
    ]
    for old, new, in_unscheduled, in_assigned in cases:
        cache = _cache(enabled)
        cache.add_pod_group_member(old)
        cache.update_pod_group_member(old, new)
        if not enabled:
            assert cache.pod_group_states == {}
            continue
        state = cache.pod_group_states_lister().get("namespace", "pg")
        assert (new.name in state.unscheduled_pods()) == in_unscheduled
        assert (new.uid in state.assigned_pod_uids()) == in_assigned
        assert new.uid not in state.assumed_pod_uids()
        assert state.all_pods[new.uid] is new
    # a pod with no pod group name
    plain, plain_updated = make_pod("no-pod-group-pod"), make_pod("no-pod-group-pod", labels={"foo": "bar"})
    cache = _cache(enabled)
    cache.add_pod_group_member(plain)
    cache.update_pod_group_member(plain, plain_updated)
    assert cache.pod_group_states == {}


@pytest.mark.parametrize("init_pods,init_group,count", [
    (("pod1", "pod2"), False, 1),
    (("pod1",), False, 0),
    (("pod1",), True, 1),
    ((), False, 0),
], ids=["remove a pod from a group with multiple pods", "remove a last pod from a group",
        "remove a last pod from a group when PodGroup object still exists shouldn't remove the state",
        "remove a non-existent pod from a group should be a no-op"])
def test_remove_pod_group_member(enabled, init_pods, init_group, count):
    pods = {"pod1": member("unscheduled-pod", uid="pod1", ns="namespace"),
            "pod2": member("assigned-pod", uid="pod2", ns="namespace", node="node")}
    cache = _cache(enabled)
    if init_group:
        cache.add_pod_group(pod_group(ns="namespace"))
    for name in init_pods:
        cache.add_pod_group_member(pods[name])
    cache.remove_pod_group_member(pods["pod1"])
    assert len(cache.pod_group_states) == (count if enabled else 0)
    if enabled and count:
        assert "pod1" not in cache.pod_group_states_lister().get("namespace", "pg").all_pod_uids()


def test_add_pod_group(enabled):
    cache = _cache(enabled)
    cache.add_pod_group_member(member("pod1", ns="ns"))
    pg = pod_group(ns="ns")
    cache.add_pod_group(pg)
    if not enabled:
        assert cache.pod_group_states == {}
        with pytest.raises(PodGroupStateError, match="^generic workload feature gate is disabled$"):
            cache.pod_groups_lister().get("ns", "pg")
        return
    assert cache.pod_groups_lister().get("ns", "pg") is pg
    assert cache.pod_group_states_lister().get("ns", "pg").all_pods_count() == 1
    pg1, pg2 = pod_group("pg1"), pod_group("pg2")
    cache.add_pod_group(pg1)
    cache.add_pod_group(pg2)
    assert cache.pod_groups_lister().get("ns1", "pg1") is pg1 and cache.pod_groups_lister().get("ns1", "pg2") is pg2


def test_update_pod_group(enabled):
    old, new = pod_group("pg", "ns", 1), pod_group("pg", "ns", 2)
    cache = _cache(enabled)
    cache.add_pod_group(old)
    cache.update_pod_group(old, new)
    if enabled:
        assert cache.pod_groups_lister().get("ns", "pg") is new
    else:
        with pytest.raises(PodGroupStateError):
            cache.pod_groups_lister().get("ns", "pg")


@pytest.mark.parametrize("with_member", [False, True], ids=["remove pod group with GenericWorkload enabled",
                                                            "remove pod group when it still has pod members"])
def test_remove_pod_group(enabled, with_member):
    pg = pod_group(ns="ns")
    cache = _cache(enabled)
    if with_member:
        cache.add_pod_group_member(member("pod1", ns="ns"))
    cache.add_pod_group(pg)
    cache.remove_pod_group(pg)
    with pytest.raises(PodGroupStateError):
        cache.pod_groups_lister().get("ns", "pg")
    if not enabled:
        return
    key = pod_group_key("ns", "pg")
    if with_member:
        state = cache.pod_group_states[key]
        assert state.pod_group is None and state.all_pods_count() == 1
        with pytest.raises(PodGroupStateError, match="^pod group object not found for pod group podgroup/ns/pg$"):
            cache.pod_groups_lister().get("ns", "pg")
    else:
        assert key not in cache.pod_group_states


@pytest.mark.parametrize("assume", [False, True], ids=["bind unscheduled pod group member",
                                                       "bind assumed pod group member"])
def test_binding_pod_group_member(assume):
    cache = _cache(True)
    pod = member("pod1", uid="pod1-uid", ns="namespace")
    cache.add_pod_group_member(pod)
    if assume:
        cache.assume_pod(pod.with_node_name("node1"))
        state = cache.pod_group_states_lister().get("namespace", "pg")
        assert state.assumed_pod_uids() == ["pod1-uid"] and state.scheduled_pods_count() == 1
    cache.add_pod(pod.with_node_name("node1"))
    state = cache.pod_group_states_lister().get("namespace", "pg")
    assert "pod1-uid" in state.assigned_pod_uids()
    assert "pod1-uid" not in state.assumed_pod_uids() and "pod1" not in state.unscheduled_pods()


def test_forget_returns_member_to_unscheduled():
    """TestForgetPodGroupMember: a forgotten assumption puts the member back with the
    unscheduled pods (it stays a member)."""
    cache = _cache(True)
    pod = member("pod-0", uid="uid-0", ns="test-ns")
    cache.add_pod_group_member(pod)
    assumed = pod.with_node_name("node1")
    cache.assume_pod(assumed)
    cache.forget_pod(assumed)
    state = cache.pod_group_states_lister().get("test-ns", "pg")
    assert state.unscheduled_pods() == {"pod-0": pod} and state.scheduled_pods_count() == 0


def test_assume_unknown_member_creates_the_state():
    """assumePodGroupMember: a state that did not know the pod is made with it (stored as the
    assumed pod, which carries its node: so it counts as assigned, as upstream's does)."""
    cache = _cache(True)
    assumed = member("p", node="node1")
    cache.assume_pod(assumed)
    state = cache.pod_group_states_lister().get("ns1", "pg")
    assert state.assigned_pod_uids() == ["p"] and state.all_pods_count() == 1 and state.scheduled_pods_count() == 1


def test_bound_members_updated_and_removed():
    cache = _cache(True)
    bound = member("b", node="node1")
    cache.add_pod(bound)
    relabelled = member("b", node="node1", labels={"x": "y"})
    cache.update_pod(bound, relabelled)
    state = cache.pod_group_states_lister().get("ns1", "pg")
    assert state.all_pods["b"] is relabelled and state.assigned_pod_uids() == ["b"]
    cache.remove_pod(relabelled)
    assert cache.pod_group_states == {}


def test_bulk_bound_members():
    cache = _cache(True)
    pods = [member(f"b{i}", node="node1") for i in range(3)]
    cache.add_pods(pods)
    state = cache.pod_group_states_lister().get("ns1", "pg")
    assert state.scheduled_pods_count() == 3
    cache.remove_pod(pods[0])
    assert state.assigned_pod_uids() == ["b1", "b2"]


def test_lister_errors():
    cache = _cache(True)
    with pytest.raises(PodGroupStateError, match="^pod group state not found for pod group ns/x$"):
        cache.pod_group_states_lister().get("ns", "x")
    with pytest.raises(PodGroupStateError, match="^pod group state not found for pod group podgroup/ns/x$"):
        cache.pod_groups_lister().get("ns", "x")
    assert str(EntityKey("podgroup", "ns", "x")) == "podgroup/ns/x"


# -- event handlers (eventhandlers.go: addPodGroup/updatePodGroup/deletePodGroup, the members) ------
def _scheduler(enabled: bool):
    """A Scheduler whose cache tracks pod groups while the scheduler keeps GenericWorkload off (a
    member without its PodGroup is then scheduled alone): the cache's switch is set here, and the
    API server's gate with it (off, it drops a new pod's spec.schedulingGroup)."""
    from fastsched import Scheduler
    from fastsched.features import FeatureGates
    s = Scheduler()
    s.cache.generic_workload = enabled
    if enabled:
        s.cluster.api_gates = FeatureGates({"GenericWorkload": True})
    s.add_nodes([make_node("node1")])
    return s


def test_event_handlers_keep_the_states(enabled):
    s = _scheduler(enabled)
    s.add(pod_group("pg", "ns1", 2))
    queued = member("m1")
    s.add_pods([queued])
    if not enabled:
        assert s.cache.pod_group_states == {}
        return
    state = s.cache.pod_group_states_lister().get("ns1", "pg")
    assert state.pod_group.min_count == 2 and list(state.unscheduled_pods()) == ["m1"]
    s.update_object(pod_group("pg", "ns1", 3))
    assert s.cache.pod_groups_lister().get("ns1", "pg").min_count == 3
    s.delete_pod(queued)
    assert state.all_pods_count() == 0 and state.pod_group is not None
    s.delete_object("PodGroup", "pg", "ns1")
    assert s.cache.pod_group_states == {}


def test_scheduled_member_counts_as_assigned():
    s = _scheduler(True)
    s.add_pods([member("m1")])
    s.run()
    state = s.cache.pod_group_states_lister().get("ns1", "pg")
    assert state.assigned_pod_uids() == ["m1"] and state.unscheduled == {}


# -- the entity key strings' memo (fastsched's) ---------------------------------------------------
def test_entity_key_string_is_the_key_text(monkeypatch):
    """``entity_key_string`` answers ``str(EntityKey(...))`` for every key type, namespace and
    name, asked once or again, across the memo's clearing when full (the queue's containers store
    entities by this text: a wrong or stale one loses the entity)."""
    import fastsched.framework.podgroups as pg

    monkeypatch.setattr(pg, "_KEYS_MAX", 4)
    monkeypatch.setattr(pg, "_KEY_STRINGS", {})
    keys = [(t, ns, name) for t in ("podgroup", "compositepodgroup") for ns in ("a", "b/c") for name in ("x", "y")]
    for _ in range(2):
        for key in keys:
            assert pg.entity_key_string(*key) == str(EntityKey(*key))
            assert len(pg._KEY_STRINGS) <= 4
