"""Upstream v1.37.2 ``default_preemption_test.go`` ``TestPodEligibleToPreemptOthers``, every row.

As upstream's test: the nodes, PodGroups, CompositePodGroups and pods go to the scheduler cache
(GenericWorkload, and CompositePodGroup with TopologyAwareWorkloadScheduling, set per row), the
plugin reads the cache's snapshot and listers, and ``PodEligibleToPreemptOthers`` is asked with
the row's nominated-node status. Priorities: low 0, high 1000, very high 10000.
"""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from fastsched.api import PREEMPT_NEVER
from fastsched.api.compositepodgroup import CompositePodGroup
from fastsched.api.objects import PodSchedulingGroup
from fastsched.api.scheduling import PodGroup, PodGroupSchedulingPolicy
from fastsched.features import FeatureGates
from fastsched.framework import Code, Status
from fastsched.plugins.defaultpreemption import DefaultPreemption
from fastsched.scheduler.cache import Cache
from fastsched.scheduler.mutable_snapshot import MutableSnapshot

from .support import HIGH, LOW, VERY_HIGH, node, pod

PREEMPTED = {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}
GW, CPG = "GenericWorkload", "CompositePodGroup"


def in_group(p, group):
    return p.replace(scheduling_group=PodSchedulingGroup(group))


def pg(name, priority, parent=None):
    return PodGroup(name=name, namespace="ns2", uid=name, priority=priority, parent_composite_pod_group_name=parent,
                    scheduling_policy=PodGroupSchedulingPolicy(basic=True))


def cpg(name, priority, parent=None):
    return CompositePodGroup(name=name, namespace="ns2", uid=name, priority=priority,
                             parent_composite_pod_group_name=parent)


def group_preemptor():
    return in_group(pod("p", namespace="ns1", priority=HIGH, nominated="node1"), "pg1")


def group_victim(group="pg1"):
    return in_group(pod("v1", namespace="ns2", node_name="node1", priority=VERY_HIGH, deleting=True,
                        conditions=[PREEMPTED]), group)


# name -> (preemptor, pods, pod groups, composite pod groups, nodes, gates, nominated node status, expected)
ROWS: dict[str, tuple] = {
    "Pod with nominated node": (
        pod("p_with_nominated_node", priority=HIGH, nominated="node1"),
        [pod("p1", priority=LOW, node_name="node1", deleting=True)], [], [], ["node1"], (),
        Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) had untolerated taint"), True),
    "Pod without nominated node": (
        pod("p_without_nominated_node", priority=HIGH), [], [], [], [], (), None, True),
    "Pod with 'PreemptNever' preemption policy": (
        pod("p_with_preempt_never_policy", priority=HIGH, preemption_policy=PREEMPT_NEVER), [], [], [], [], (), None,
        False),
    "preemption victim pod terminating, as indicated by the dedicated DisruptionTarget condition": (
        pod("p_with_nominated_node", priority=HIGH, nominated="node1"),
        [pod("p1", priority=LOW, node_name="node1", deleting=True, conditions=[PREEMPTED])], [], [], ["node1"], (),
        None, False),
    "non-victim Pods terminating": (
        pod("p_with_nominated_node", priority=HIGH, nominated="node1"),
        [pod("p1", priority=LOW, node_name="node1", deleting=True)], [], [], ["node1"], (), None, True),
    "Preemptor with SchedulingGroup, victim priority overridden by PodGroup in victim namespace": (
        group_preemptor(), [group_victim()], [pg("pg1", LOW)], [], ["node1"], (GW,), None, False),
    "Preemptor with SchedulingGroup, victim priority overridden by CompositePodGroup in victim namespace": (
        group_preemptor(), [group_victim()], [pg("pg1", LOW, parent="cpg1")], [cpg("cpg1", LOW)], ["node1"],
        (GW, CPG), None, False),
    "Preemptor with SchedulingGroup, CompositePodGroup not found in victim namespace, fallback to PodGroup priority": (
        group_preemptor(), [group_victim()], [pg("pg1", LOW, parent="cpg1")], [], ["node1"], (GW, CPG), None, False),
    "Preemptor with SchedulingGroup, PodGroup not found in victim namespace, fallback to pod priority when "
    "CompositePodGroup is enabled": (
        group_preemptor(), [group_victim()], [], [], ["node1"], (GW, CPG), None, True),
    "Preemptor with SchedulingGroup, victim priority overridden by root CompositePodGroup in multi-level CPG "
    "hierarchy": (
        group_preemptor(), [group_victim("leaf-pg")], [pg("leaf-pg", VERY_HIGH, parent="child-cpg")],
        [cpg("child-cpg", VERY_HIGH, parent="root-cpg"), cpg("root-cpg", LOW)], ["node1"], (GW, CPG), None, False),
}


@pytest.fixture
def composite_gate(monkeypatch):
    """The gate is not switchable for users yet: switchable for these tests (upstream's rows set it)."""
    import dataclasses

    from fastsched.features import COMPOSITE_POD_GROUP, KNOWN_GATES
    monkeypatch.setitem(KNOWN_GATES, COMPOSITE_POD_GROUP,
                        dataclasses.replace(KNOWN_GATES[COMPOSITE_POD_GROUP], switchable=True))


@pytest.mark.parametrize("name", list(ROWS), ids=list(ROWS))
def test_pod_eligible_to_preempt_others(composite_gate, name):
    preemptor, pods, pgs, cpgs, nodes, gates, nominated_status, expected = ROWS[name]
    generic_workload, composite = GW in gates, CPG in gates
    cache = Cache(generic_workload=generic_workload, composite_pod_group=composite)
    for n in nodes:
        cache.add_node(node(n))
    for g in pgs:
        cache.add_pod_group(g)
    if composite:
        for c in cpgs:
            cache.add_composite_pod_group(c)
    for p in pods:
        cache.add_pod(p)
    handle = SimpleNamespace(
        feature_gates=FeatureGates({GW: generic_workload, "TopologyAwareWorkloadScheduling": composite, CPG: composite}),
        pod_group_manager=cache, client=None, mutable_snapshot=MutableSnapshot(cache),
        snapshot_shared_lister=lambda: SimpleNamespace(node_infos=lambda: cache.snapshot))
    got, _ = DefaultPreemption(None, handle).pod_eligible_to_preempt_others(preemptor, nominated_status)
    assert got is expected
