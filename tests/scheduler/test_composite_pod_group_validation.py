"""The composite group cycle's checks before scheduling (``schedule_one_podgroup.go``):
``validatePodGroup`` over a tree (``TestValidatePodGroup``'s CompositePodGroup rows, every one),
``reconcilePodGroupWithSnapshot`` for trees and ``updatePodGroupConditionWithError`` over the
leaves. The composite cycle itself is not wired yet: these call the Scheduler's methods on an
entity the queue's forest builds and a cache that holds the objects, as upstream's tests call
them on a test snapshot.
"""
from __future__ import annotations

import pytest

from fastsched.api.compositepodgroup import CompositePodGroup
from fastsched.api.objects import PodSchedulingGroup
from fastsched.api.scheduling import GangSchedulingPolicy, PodGroup, PodGroupSchedulingPolicy
from fastsched.clock import VirtualClock
from fastsched.features import FeatureGates
from fastsched.framework.composite import composite_pod_group_key
from fastsched.framework.types import PodInfo, QueuedPodInfo
from fastsched.scheduler.backend.queue.workload_forest import CompositeWorkloadForest
from fastsched.scheduler.cache import Cache
from fastsched.scheduler.schedule_one_podgroup import PodGroupCycleMixin
from fastsched.testing import make_pod

NEVER, LOWER = "Never", "PreemptLowerPriority"


class Harness(PodGroupCycleMixin):
    """The Scheduler's state the checks read: the cache, the profiles, the gates, a client."""

    def __init__(self, cache: Cache, policy_gate: bool):
        self.cache = cache
        self.profiles = {"default-scheduler": object()}
        self.feature_gates = FeatureGates({"GenericWorkload": True, "PodGroupPreemptionPolicy": policy_gate})
        self.clock = VirtualClock()
        self.updates: list = []
        self.cluster = self

    def update_object(self, obj) -> None:  # the status patch
        self.updates.append(obj)


def cpg(name: str, parent: str | None = None, policy: str | None = None, ts: float | None = None):
    return CompositePodGroup(name=name, namespace="default", parent_composite_pod_group_name=parent, priority=10,
                             preemption_policy=policy, creation_timestamp=ts)


def pg(name: str, parent: str, policy: str | None = None, ts: float | None = None):
    return PodGroup(name=name, namespace="default", parent_composite_pod_group_name=parent, priority=10,
                    preemption_policy=policy, creation_timestamp=ts,
                    scheduling_policy=PodGroupSchedulingPolicy(gang=GangSchedulingPolicy(1)))


def pod(name: str, group: str, policy: str = LOWER, priority: int = 10, node: str | None = None):
    p = make_pod(name, priority=priority, node_name=node).replace(scheduling_group=PodSchedulingGroup(group),
                                                                  preemption_policy=policy)
    return p.replace(uid=f"uid-{name}")


def build(cpgs, pgs, pods, scheduled=()):
    """The cache holding the objects and the scheduled pods (``NewTestSnapshotWithCompositePodGroups``)
    and the root's queue entity with ``pods`` (``buildHierarchicalQueuedPodGroupInfo``)."""
    cache = Cache(generic_workload=True, composite_pod_group=True)
    forest = CompositeWorkloadForest(True)
    for c in cpgs:
        cache.add_composite_pod_group(c)
        forest.add_composite_pod_group(c)
    for g in pgs:
        cache.add_pod_group(g)
        forest.add_pod_group(g)
    for p in scheduled:
        cache.add_pod(p)
    for p in pods:
        cache.add_pod_group_member(p)
    entity = forest.build_queued_pod_group_info(composite_pod_group_key("default", cpgs[0].name))
    for p in pods:
        entity.add_pod(QueuedPodInfo(PodInfo(p)))
    return cache, entity


TWO_LEAVES = lambda root_policy, pg1, pg2: ([cpg("cpg-root", policy=root_policy)],  # noqa: E731
                                            [pg("pg1", "cpg-root", pg1), pg("pg2", "cpg-root", pg2)])

# TestValidatePodGroup's CPG rows: (root/leaf groups, pods, PodGroupPreemptionPolicy, error expected)
ROWS = {
    "CPG success when all leaf groups and pods have PreemptNever with PodGroupPreemptionPolicy enabled": (
        TWO_LEAVES(NEVER, NEVER, NEVER), [pod("p1", "pg1", NEVER), pod("p2", "pg2", NEVER)], True, False),
    "CPG success when all leaf groups and pods have PreemptNever with PodGroupPreemptionPolicy disabled": (
        TWO_LEAVES(None, NEVER, NEVER), [pod("p1", "pg1", NEVER), pod("p2", "pg2", NEVER)], False, False),
    "CPG success when all leaf groups and pods have PreemptLowerPriority with PodGroupPreemptionPolicy enabled": (
        TWO_LEAVES(LOWER, LOWER, LOWER), [pod("p1", "pg1", LOWER), pod("p2", "pg2", LOWER)], True, False),
    "CPG failure when root CPG has PreemptLowerPriority but leaf group has PreemptNever with "
    "PodGroupPreemptionPolicy enabled": (
        TWO_LEAVES(LOWER, NEVER, LOWER), [pod("p1", "pg1", NEVER), pod("p2", "pg2", LOWER)], True, True),
    "CPG failure when root CPG has PreemptNever but leaf group has PreemptLowerPriority with "
    "PodGroupPreemptionPolicy enabled": (
        TWO_LEAVES(NEVER, LOWER, NEVER), [pod("p1", "pg1", LOWER), pod("p2", "pg2", NEVER)], True, True),
    "CPG failure when different preemption policies are used across pods in the CPG with "
    "PodGroupPreemptionPolicy enabled": (
        TWO_LEAVES(NEVER, NEVER, NEVER), [pod("p1", "pg1", NEVER), pod("p2", "pg2", LOWER)], True, True),
    "CPG failure when different preemption policies are used across leaf groups in the CPG with "
    "PodGroupPreemptionPolicy enabled": (
        TWO_LEAVES(NEVER, NEVER, LOWER), [pod("p1", "pg1", NEVER), pod("p2", "pg2", LOWER)], True, True),
    "CPG success in multi-level hierarchy when all levels have PreemptNever with PodGroupPreemptionPolicy enabled": (
        ([cpg("cpg-root", policy=NEVER), cpg("cpg-nested", "cpg-root", NEVER)], [pg("pg1", "cpg-nested", NEVER)]),
        [pod("p1", "pg1", NEVER)], True, False),
    "CPG success in multi-level hierarchy when nested CPG has PreemptLowerPriority mismatch with "
    "PodGroupPreemptionPolicy enabled": (
        ([cpg("cpg-root", policy=NEVER), cpg("cpg-nested", "cpg-root", LOWER)], [pg("pg1", "cpg-nested", NEVER)]),
        [pod("p1", "pg1", NEVER)], True, False),
}


@pytest.mark.parametrize("groups,pods,policy_gate,expect_error", list(ROWS.values()), ids=list(ROWS))
def test_validate_pod_group_over_a_tree(groups, pods, policy_gate, expect_error):
    cache, entity = build(*groups, pods)
    err = Harness(cache, policy_gate)._validate_pod_group(entity)
    assert (err is not None) == expect_error, err


def test_validate_checks_the_scheduled_pods_of_every_leaf_and_names_the_first_mismatch():
    groups = TWO_LEAVES(None, None, None)
    cache, entity = build(*groups, [pod("p1", "pg1")], scheduled=[pod("s2", "pg2", priority=3, node="n1")])
    err = Harness(cache, False)._validate_pod_group(entity)
    assert str(err) == ("all pods in a single pod group should have the same priority as the pod group's priority, "
                        "got 3 and 10")


def test_reconcile_takes_the_caches_objects_and_refuses_a_changed_shape():
    groups = ([cpg("cpg-root"), cpg("mid", "cpg-root")], [pg("pg1", "mid"), pg("pg2", "cpg-root")])
    cache, entity = build(*groups, [pod("p1", "pg1")])
    h = Harness(cache, False)
    newer_mid = cpg("mid", "cpg-root").replace(priority=11)
    cache.update_composite_pod_group(groups[0][1], newer_mid)
    assert h._reconcile_pod_group_with_snapshot(entity.tree) is None
    mid = next(c for c in entity.tree.children if c.name == "mid")
    assert mid.composite_pod_group is newer_mid
    # a child the queue's tree does not have yet
    cache.add_pod_group(pg("pg3", "mid"))
    err = h._reconcile_pod_group_with_snapshot(entity.tree)
    assert str(err) == ("different number of children in composite pod group between snapshot (2) and queued "
                        "entity (1)")
    # an object gone from the cache
    cache2, entity2 = build(*groups, [pod("p1", "pg1")])
    cache2.remove_pod_group(groups[1][1])
    err = Harness(cache2, False)._reconcile_pod_group_with_snapshot(entity2.tree)
    assert err is not None


def test_reconcile_refuses_a_different_parent():
    groups = ([cpg("cpg-root")], [pg("pg1", "cpg-root")])
    cache, entity = build(*groups, [pod("p1", "pg1")])
    entity.tree.children[0].pod_group = pg("pg1", "elsewhere")
    err = Harness(cache, False)._reconcile_pod_group_with_snapshot(entity.tree)
    assert str(err) == "different parent in pod group between snapshot (cpg-root) and queued entity (elsewhere)"
    entity.tree.children[0].pod_group = groups[1][0]
    entity.tree.composite_pod_group = cpg("cpg-root", "up")
    err = Harness(cache, False)._reconcile_pod_group_with_snapshot(entity.tree)
    assert str(err) == "different parent in composite pod group between snapshot ([unset]) and queued entity (up)"


def test_the_error_condition_goes_to_every_leaf_in_child_group_order():
    groups = ([cpg("cpg-root"), cpg("mid", "cpg-root", ts=1.0)],
              [pg("b", "mid"), pg("a", "mid"), pg("z", "cpg-root", ts=0.5)])
    cache, entity = build(*groups, [pod("p1", "a")])
    h = Harness(cache, False)
    h._update_pod_group_condition_with_error(entity.tree, RuntimeError("boom"))
    assert [(u.name, u.conditions[0]["reason"], u.conditions[0]["message"]) for u in h.updates] == [
        ("z", "SchedulerError", "boom"), ("a", "SchedulerError", "boom"), ("b", "SchedulerError", "boom")]
    # a root whose object reconciliation dropped: no condition (upstream sets it nil)
    h.updates.clear()
    entity.tree.composite_pod_group = None
    h._update_pod_group_condition_with_error(entity.tree, RuntimeError("boom"))
    assert h.updates == []
