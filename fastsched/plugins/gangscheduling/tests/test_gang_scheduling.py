"""GangScheduling: upstream's ``gangscheduling_test.go`` (v1.37.2), the CompositePodGroup=false cases.

``Test_isSchedulableAfterPodAdded``, ``Test_isSchedulableAfterPodGroupAdded``,
``Test_isSchedulableAfterPodGroupUpdated``, ``TestGangSchedulingFlow`` and ``TestPlacementFeasible``
(their ``(CPG=false)`` / ``cpgFeatureGate=false`` rows; a PodGroup's ``parentCompositePodGroupName``
changes nothing with the gate off, as those rows show). ``Test_isSchedulableAfterCompositePodGroupAdded``
needs CompositePodGroup, which fastsched does not model.
"""
from __future__ import annotations

import pytest

from fastsched.api.objects import PodSchedulingGroup
from fastsched.api.scheduling import GangSchedulingPolicy, PodGroup, PodGroupSchedulingPolicy
from fastsched.framework.cycle_state import CycleState
from fastsched.framework.interface import ActionType, EventResource, QueueingHint
from fastsched.framework.podgroups import QueuedPodGroupInfo
from fastsched.framework.status import Code, Status
from fastsched.plugins.gangscheduling import NAME, PERMIT_TIMEOUT_SECONDS, GangScheduling, PlacementProgress
from fastsched.scheduler.cache import Cache
from fastsched.testing import make_node, make_pod

QUEUE, SKIP = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP


def pod(name="p", ns="default", group=None, node=""):
    p = make_pod(name or "p", namespace=ns).replace(uid=name)
    if group is not None:
        p = p.replace(scheduling_group=PodSchedulingGroup(group))
    return p.with_node_name(node) if node else p


def pg(name, ns="default", min_count=None, parent=None):
    policy = PodGroupSchedulingPolicy(basic=True) if min_count is None else \
        PodGroupSchedulingPolicy(gang=GangSchedulingPolicy(min_count))
    return PodGroup(name=name, namespace=ns, scheduling_policy=policy, parent_composite_pod_group_name=parent)


class Handle:
    """The framework handle the plugin sees: the cache as PodGroupManager, an activator and the
    waiting pods."""

    def __init__(self, cache=None):
        self.pod_group_manager = cache
        self.activated: list = []
        self.waiting: dict = {}

    def activate(self, pods):
        self.activated.extend(pods.values())

    def get_waiting_pod(self, uid):
        return self.waiting.get(uid)


class Waiting:
    def __init__(self):
        self.allowed_by: list[str] = []

    def allow(self, plugin):
        self.allowed_by.append(plugin)


# -- Test_isSchedulableAfterPodAdded (CPG=false) ---------------------------------------------------------
@pytest.mark.parametrize("target,added,expected", [
    (pod("p", group="pg"), pod("", group="pg"), QUEUE),
    (pod("p", group="pg"), pod("", group="pg", node="node1"), QUEUE),
    (pod("p", group="pg"), pod("", ns="foo", group="pg"), SKIP),
    (pod("p", group="pg1"), pod("", group="pg2"), SKIP),
    (pod("p1", group="pg1"), pod("p2", group="pg2"), SKIP),
    (pod("p1", group="pg1"), pod("p2", group="pg2"), SKIP),
    (pod("p"), pod("q", group="pg"), SKIP),
    (pod("p", group="pg"), pod("q"), SKIP),
], ids=[
    "add a newPod which matches the pod's scheduling group (CPG=false)",
    "add a newPod with NodeName set which matches the pod's scheduling group (CPG=false)",
    "add a newPod which doesn't match the pod's namespace (CPG=false)",
    "add a newPod which doesn't match the pod's pod group name (CPG=false)",
    "add a newPod which belongs to a different scheduling group but matches the root CPG (CPG=false)",
    "add a newPod which belongs to a different scheduling group and does not match the root CPG (CPG=false)",
    "target pod without a scheduling group",
    "added pod without a scheduling group",
])
def test_is_schedulable_after_pod_added(target, added, expected):
    assert GangScheduling(Handle()).is_schedulable_after_pod_added(target, None, added) == (expected, None)


def test_hints_with_objects_of_another_kind_queue_with_an_error():
    pl = GangScheduling(Handle())
    hint, err = pl.is_schedulable_after_pod_added(pod("p", group="pg"), None, pg("pg"))
    assert hint == QUEUE and str(err) == "expected *v1.Pod, but got PodGroup"
    hint, err = pl.is_schedulable_after_pod_group_added(pod("p", group="pg"), None, pod("q"))
    assert hint == QUEUE and str(err) == "expected *v1beta1.PodGroup, but got Pod"


# -- Test_isSchedulableAfterPodGroupAdded (CPG=false) -----------------------------------------------------
@pytest.mark.parametrize("target,added,expected", [
    (pod("p", group="pg"), pg("pg", min_count=1), QUEUE),
    (pod("p", group="pg1"), pg("pg2", min_count=1), SKIP),
    (pod("p", ns="ns1", group="pg"), pg("pg", ns="ns2", min_count=1), SKIP),
    (pod("p", group="pg1"), pg("pg2", min_count=1, parent="cpg-root"), SKIP),
    (pod("p", group="pg1"), pg("pg2", min_count=1, parent="cpg-root2"), SKIP),
    (pod("p"), pg("pg", min_count=1), SKIP),
], ids=[
    "add a pod group which matches the pod's pod group name (CPG=false)",
    "add a pod group which doesn't match the pod's scheduling group name (CPG=false)",
    "add a pod group which doesn't match the pod's scheduling group namespace (CPG=false)",
    "add a pod group which doesn't match the pod's scheduling group but matches the root CPG (CPG=false)",
    "add a pod group which doesn't match the pod's scheduling group and doesn't match the root CPG (CPG=false)",
    "pod without a scheduling group",
])
def test_is_schedulable_after_pod_group_added(target, added, expected):
    assert GangScheduling(Handle()).is_schedulable_after_pod_group_added(target, None, added) == (expected, None)


# -- Test_isSchedulableAfterPodGroupUpdated (CPG=false) ---------------------------------------------------
@pytest.mark.parametrize("target,old,new,expected", [
    (pod("p", ns="ns1", group="pg"), pg("pg", "ns1", 4), pg("pg", "ns1", 3), QUEUE),
    (pod("p", ns="ns1", group="pg"), pg("pg", "ns1"), pg("pg", "ns1"), SKIP),
    (pod("p", ns="ns1", group="pg"), pg("pg", "ns1", 3), pg("pg", "ns1", 4), SKIP),
    (pod("p", ns="ns1", group="pg"), pg("pg", "ns1", 3), pg("pg", "ns1", 3), SKIP),
    (pod("p", ns="ns1", group="pg-other"), pg("pg", "ns1", 4), pg("pg", "ns1", 3), SKIP),
    (pod("p", ns="ns-other", group="pg"), pg("pg", "ns1", 4), pg("pg", "ns1", 3), SKIP),
    (pod("p", ns="ns1"), pg("pg", "ns1", 4), pg("pg", "ns1", 3), SKIP),
], ids=[
    "minCount decreased matches target pod (CPG=false)",
    "update Basic policy (CPG=false)",
    "minCount increased matches target pod (CPG=false)",
    "minCount unchanged matches target pod (CPG=false)",
    "minCount decreased but pod group name doesn't match target pod (CPG=false)",
    "minCount decreased but pod group namespace doesn't match target pod (CPG=false)",
    "pod without a scheduling group is skipped (CPG=false)",
])
def test_is_schedulable_after_pod_group_updated(target, old, new, expected):
    assert GangScheduling(Handle()).is_schedulable_after_pod_group_updated(target, old, new) == (expected, None)


def test_events_to_register():
    events = [(e.event.resource, e.event.action_type) for e in GangScheduling(Handle()).events_to_register()]
    assert events == [(EventResource.UNSCHEDULED_POD, ActionType.ADD), (EventResource.ASSIGNED_POD, ActionType.ADD),
                      (EventResource.POD_GROUP, ActionType.ADD), (EventResource.POD_GROUP, ActionType.UPDATE)]


# -- TestGangSchedulingFlow (CPG=false) ---------------------------------------------------------------
GANG1, GANG2, BASIC = pg("pg1", "ns1", 3), pg("pg2", "ns1", 4), pg("pg3", "ns1")
P1, P2, P3 = (pod(f"p{i}", "ns1", "pg1") for i in (1, 2, 3))
P4, P5 = pod("p4", "ns1", "pg2"), pod("p5", "ns1", "pg2")
BASIC_POD, NON_GANG = pod("basic-pod", "ns1", "pg3"), pod("non-gang", "ns1")
CPG = [pg("pg1-cpg", "ns1", 1, "cpg-sub1"), pg("pg2-cpg", "ns1", 1, "cpg-sub1"), pg("pg3-cpg", "ns1", 1, "cpg-sub1"),
       pg("pg4-cpg", "ns1", None, "cpg-sub2"), pg("pg5-cpg", "ns1", 1, "cpg-sub2"),
       pg("pg6-cpg", "ns1", 1, "cpg-sub3"), pg("pg7-cpg", "ns1", 1, "cpg-sub3")]
P1_CPG, P2_CPG = pod("p1-cpg", "ns1", "pg1-cpg"), pod("p2-cpg", "ns1", "pg2-cpg")
P4_CPG, P6_CPG = pod("p4-cpg", "ns1", "pg4-cpg"), pod("p6-cpg", "ns1", "pg6-cpg")
BASIC_ROOT = [pg("pg-basic-1", "ns1", 2, "cpg-basic-root"), pg("pg-basic-2", "ns1", 2, "cpg-basic-root")]
P1_1, P1_2, P2_1 = pod("p1_1", "ns1", "pg-basic-1"), pod("p1_2", "ns1", "pg-basic-1"), pod("p2_1", "ns1", "pg-basic-2")

WAIT_PERMIT = Status(Code.WAIT, "waiting for minCount pods from a gang to be scheduled")
QUORUM = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "waiting for minCount pods from a gang to appear in scheduling queue")

FLOW = {
    "non-gang pod succeeds immediately (CPG=false)": (NON_GANG, [], [GANG1, GANG2, BASIC], [], None, None, [], []),
    "basic policy pod succeeds immediately (CPG=false)": (BASIC_POD, [], [GANG1, GANG2, BASIC], [], None, None, [],
                                                          []),
    "gang pod fails PreEnqueue when pod group is not yet created (CPG=false)": (
        P1, [P2, P3, P4, P5], [], [],
        Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'waiting for pods\'s pod group "pg1" to appear in scheduling queue'),
        None, [], []),
    "gang pod fails PreEnqueue when quorum is not met (CPG=false)": (P1, [P2, P4, P5], [GANG1, GANG2], [], QUORUM,
                                                                     None, [], []),
    "gang pod passes PreEnqueue, but waits at Permit (CPG=false)": (P1, [P2, P3, P4, P5], [GANG1, GANG2],
                                                                    [P2, P4, P5], None, WAIT_PERMIT, [P3], []),
    "final gang pod arrives at Permit and allows all waiting pods from a gang (CPG=false)": (
        P1, [P2, P3, P4, P5], [GANG1, GANG2], [P2, P3, P4, P5], None, None, [], ["p2", "p3"]),
    "CPG Hierarchical Stage 1: No pods, tree not ready (CPG=false)": (P1_CPG, [], CPG, [], None, None, [], []),
    "CPG Hierarchical Stage 2: Add p6 (CPG=false)": (P6_CPG, [P1_CPG, P2_CPG], CPG, [], None, None, [], []),
    "CPG Hierarchical Stage 3: Add p4 (CPG=false)": (P4_CPG, [P1_CPG, P2_CPG, P6_CPG], CPG, [], None, None, [], []),
    "CPG Basic With Gang Stage 1: pg1 ready, root ready (CPG=false)": (P2_1, [P1_1, P1_2], BASIC_ROOT, [], QUORUM,
                                                                       None, [], []),
    "CPG Permit Wait: Hierarchical gang waits at permit if gang isn't fully scheduled (CPG=false)": (
        P4_CPG, [P1_CPG, P2_CPG, P6_CPG], CPG, [], None, None, [], []),
}


@pytest.mark.parametrize("name", list(FLOW))
def test_gang_scheduling_flow(name):
    target, initial_pods, groups, waiting_on_permit, want_pre_enqueue, want_permit, want_activated, want_allowed = \
        FLOW[name]
    cache = Cache(generic_workload=True)
    cache.add_node(make_node("some-node"))
    for group in groups:
        cache.add_pod_group(group)
    for p in initial_pods:
        cache.add_pod_group_member(p)
    cache.add_pod_group_member(target)
    handle = Handle(cache)
    pl = GangScheduling(handle)
    got = pl.pre_enqueue(target)
    assert got == want_pre_enqueue
    if got is not None:
        return
    # other pods hit Permit before and wait there
    for p in waiting_on_permit:
        assumed = p.with_node_name("some-node")
        cache.assume_pod(assumed)
        status, timeout = pl.permit(CycleState(), assumed, "some-node")
        assert status is not None and status.code() == Code.WAIT and timeout == PERMIT_TIMEOUT_SECONDS
        handle.waiting[p.uid] = Waiting()
    handle.activated = []
    assumed = target.with_node_name("some-node")
    cache.assume_pod(assumed)
    status, timeout = pl.permit(CycleState(), assumed, "some-node")
    assert status == want_permit
    if status is not None and status.code() == Code.WAIT:
        assert [p.name for p in handle.activated] == [p.name for p in want_activated]
        cache.forget_pod(assumed)
        return
    assert timeout == 0.0
    allowed = sorted(uid for uid, w in handle.waiting.items() if w.allowed_by == [NAME])
    assert allowed == want_allowed


def test_permit_without_pod_group():
    cache = Cache(generic_workload=True)
    cache.add_pod_group_member(P1)
    status, _ = GangScheduling(Handle(cache)).permit(CycleState(), P1.with_node_name("n"), "n")
    assert (status.code(), status.message()) == (
        Code.ERROR, "failed to get podGroup ns1/pg1: pod group object not found for pod group podgroup/ns1/pg1")


def test_no_pod_group_manager_is_the_gate_off():
    """A framework without a PodGroupManager (or with GenericWorkload off): the listers' error."""
    assert GangScheduling(Handle()).pre_enqueue(P1) == Status(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'waiting for pods\'s pod group "pg1" to appear in scheduling queue')
    cache_off = Cache(generic_workload=False)
    assert GangScheduling(Handle(cache_off)).permit(CycleState(), P1, "n")[0].code() == Code.ERROR


# -- TestPlacementFeasible (isCPG=false, cpgFeatureGate=false) -------------------------------------------
S, U, W = Code.SUCCESS, Code.UNSCHEDULABLE, Code.WAIT
PLACEMENT = {
    "All pods succeed, minCount met at end": (2, 2, [S, S], [W, S], 0),
    "First pod fails, minCount not satisfiable": (3, 3, [U], [U], 0),
    "Second pod fails, minCount not satisfiable": (2, 2, [S, U], [W, U], 0),
    "Non-gang pod group with 0 scheduled pods fails": (0, 1, [U], [U], 0),
    "Non-gang pod group with succeeds once 1 pod is scheduled": (0, 1, [S], [S], 0),
    "Non-gang pod group with 1 initially scheduled pod succeeds": (0, 1, [U], [S], 1),
    "More than minCount pods, all succeed": (2, 3, [S, S, S], [W, S, S], 0),
    "More than minCount pods, first fails": (2, 3, [U, S, S], [W, W, S], 0),
    "More than minCount pods, minCount not satisfiable": (2, 3, [U, U], [W, U], 0),
    "1 pod scheduled, 2 unscheduled pods succeed, minCount 3 met": (3, 2, [S, S], [W, S], 1),
    "minCount already met by scheduled pods": (2, 1, [U], [S], 2),
    "1 pod scheduled, minCount 3, first unscheduled fails, not enough remaining": (3, 2, [U], [U], 1),
    "1 pod scheduled, minCount 4, first unscheduled succeeds, not enough remaining": (4, 2, [S], [U], 1),
}


@pytest.mark.parametrize("name", list(PLACEMENT))
def test_placement_feasible(name):
    min_count, children, pod_codes, expected, initially_scheduled = PLACEMENT[name]
    info = QueuedPodGroupInfo(pg("pg", min_count=min_count if min_count > 0 else None))
    pl = GangScheduling(Handle())
    scheduled = initially_scheduled
    for i, code in enumerate(pod_codes):
        if code == S:
            scheduled += 1
        status = pl.placement_feasible(None, info, PlacementProgress(remaining=children - (i + 1), scheduled=scheduled))
        assert (Code.SUCCESS if status is None else status.code()) == expected[i], i


def test_placement_feasible_messages():
    pl = GangScheduling(Handle())
    info = QueuedPodGroupInfo(pg("pg", min_count=3))
    assert pl.placement_feasible(None, info, PlacementProgress(1, 1)).message() == \
        "minCount (3) cannot be satisfied: 1 scheduled, 1 remaining"
    assert pl.placement_feasible(None, info, PlacementProgress(2, 1)).message() == \
        "minCount (3) is not yet satisfied: 1 scheduled, 2 remaining"


def test_registered_in_tree():
    from fastsched.plugins.registry import in_tree_registry
    assert "GangScheduling" in in_tree_registry()


@pytest.mark.parametrize("name", [n for n in FLOW if FLOW[n][4] is None and FLOW[n][0].scheduling_group is not None
                                  and FLOW[n][2]])
def test_permit_waits_answers_as_permit(name):
    """``permit_waits`` (the scheduler's Permit run for a gang, without WaitingPods) on the flow's
    rows: it waits exactly where Permit answers Wait, with the same activation; where Permit
    passes it allows nothing itself (the held members are the caller's)."""
    target, initial_pods, groups, waiting_on_permit, _, want_permit, want_activated, _ = FLOW[name]
    cache = Cache(generic_workload=True)
    cache.add_node(make_node("some-node"))
    for group in groups:
        cache.add_pod_group(group)
    for p in [*initial_pods, target]:
        cache.add_pod_group_member(p)
    handle = Handle(cache)
    pl = GangScheduling(handle)
    for p in waiting_on_permit:
        cache.assume_pod(p.with_node_name("some-node"))
        handle.waiting[p.uid] = Waiting()
    cache.assume_pod(target.with_node_name("some-node"))
    group_name = target.scheduling_group.pod_group_name
    waits = pl.permit_waits(pl._pod_group("ns1", group_name), pl._state("ns1", group_name))
    assert waits == (want_permit is not None and want_permit.code() == Code.WAIT)
    assert [p.name for p in handle.activated] == ([p.name for p in want_activated] if waits else [])
    assert all(w.allowed_by == [] for w in handle.waiting.values())
