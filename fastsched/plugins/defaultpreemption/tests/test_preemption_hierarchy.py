"""Workload-aware preemption across composite pod groups: upstream's
``pkg/scheduler/framework/preemption/util_test.go`` (``TestGetPodPriority``, ``TestTraverseHierarchyUp``,
``TestMoreImportantVictim``'s CompositePodGroup rows) and ``types_test.go`` (``TestGetHighestAllAncestor``),
with listers as upstream's mocks (keyed by name)."""
from __future__ import annotations

import pytest

from fastsched.api.compositepodgroup import CompositePodGroup
from fastsched.api.objects import PodSchedulingGroup
from fastsched.api.scheduling import DisruptionMode, PodGroup
from fastsched.framework.composite import composite_pod_group_key
from fastsched.framework.podgroups import POD_GROUP_KEY_TYPE, POD_KEY_TYPE, EntityKey, pod_group_key
from fastsched.framework.types import PodInfo
from fastsched.plugins.defaultpreemption.hierarchy import (get_highest_all_ancestor, get_pod_priority,
                                                          resolve_composite_preemption_policy,
                                                          traverse_hierarchy_up)
from fastsched.plugins.defaultpreemption.podgroup_preemption import Victim, more_important_victim
from fastsched.testing import make_pod

NS = "default"
SINGLE, ALL = DisruptionMode(single=True), DisruptionMode(all=True)


class Lister:
    """mockPodGroupLister / mockCompositePodGroupLister: objects by name."""

    def __init__(self, *objects):
        self.objects = {o.name: o for o in objects}

    def get(self, namespace, name):
        obj = self.objects.get(name)
        if obj is None:
            raise LookupError(f"{name} not found")
        return obj


def pod(name, priority=None, group=None):
    p = make_pod(name, namespace=NS)
    p = p.replace(priority=priority)
    return p if group is None else p.replace(scheduling_group=PodSchedulingGroup(group))


def pg(name, priority=None, parent=None, mode=SINGLE):
    return PodGroup(name=name, namespace=NS, priority=priority, parent_composite_pod_group_name=parent,
                    disruption_mode=mode)


def cpg(name, priority=None, parent=None, mode=SINGLE):
    return CompositePodGroup(name=name, namespace=NS, priority=priority, parent_composite_pod_group_name=parent,
                             disruption_mode=mode)


# TestGetPodPriority: (pod, PodGroup lister, CompositePodGroup lister, priority)
GET_POD_PRIORITY = {
    "pod without PodGroup returns pod priority": (pod("p1", 10), None, None, 10),
    "pod with PodGroup returns PodGroup priority instead of pod priority": (
        pod("p2", 10, "pg1"), Lister(pg("pg1", 50)), None, 50),
    "pod with PodGroup but nil PodGroupLister falls back to pod priority": (pod("p4", 20, "pg1"), None, None, 20),
    "pod with PodGroup but PodGroup not found in lister falls back to pod priority": (
        pod("p5", 30, "missing-pg"), Lister(), None, 30),
    "pod with nil priority and without PodGroup returns zero priority": (pod("p6"), None, None, 0),
    "pod with PodGroup and parent CPG, returns CPG priority": (
        pod("p7", 10, "pg1"), Lister(pg("pg1", parent="cpg1")), Lister(cpg("cpg1", 150)), 150),
    "pod with PodGroup and grandparent CPG, returns grandparent CPG priority": (
        pod("p8", 10, "pg1"), Lister(pg("pg1", parent="cpg1")), Lister(cpg("cpg1", parent="cpg2"), cpg("cpg2", 250)),
        250),
    "pod with PodGroup and parent CPG, but nil compositePodGroupLister, falls back to PodGroup priority": (
        pod("p9", 10, "pg1"), Lister(pg("pg1", 50, "cpg1")), None, 50),
    "pod with PodGroup and parent CPG, but parent CPG not found in lister, falls back to PodGroup priority": (
        pod("p10", 10, "pg1"), Lister(pg("pg1", 50, "cpg1")), Lister(), 50),
    "pod with PodGroup, parent CPG and grandparent CPG, but grandparent CPG not found in lister, falls back to "
    "parent CPG priority": (pod("p11", 10, "pg1"), Lister(pg("pg1", 50, "cpg1")),
                            Lister(cpg("cpg1", 150, "missing-cpg2")), 150),
    "pod with PodGroup, but PodGroup not found in lister and non-nil compositePodGroupLister, falls back to pod "
    "priority": (pod("p12", 50, "missing-pg"), Lister(), Lister(), 50),
}


@pytest.mark.parametrize("name", list(GET_POD_PRIORITY), ids=list(GET_POD_PRIORITY))
def test_get_pod_priority(name):
    p, pod_groups, composites, want = GET_POD_PRIORITY[name]
    assert get_pod_priority(p, pod_groups, composites) == want


PG1 = pod_group_key(NS, "pg1")


def CPG(name):  # noqa: N802
    return composite_pod_group_key(NS, name)


# TestTraverseHierarchyUp: (start, PodGroup lister, CompositePodGroup lister, stop at, visited)
TRAVERSE = {
    "nil podGroupLister": (PG1, None, None, "", []),
    "nil compositePodGroupLister": (PG1, Lister(pg("pg1")), None, "", []),
    "unsupported key type": (EntityKey(POD_KEY_TYPE, NS, "p1"), Lister(), Lister(), "", []),
    "single PG without parent CPG": (PG1, Lister(pg("pg1")), Lister(), "", [PG1]),
    "PG -> parent CPG -> grandparent CPG": (PG1, Lister(pg("pg1", parent="cpg1")),
                                             Lister(cpg("cpg1", parent="cpg2"), cpg("cpg2")), "",
                                             [PG1, CPG("cpg1"), CPG("cpg2")]),
    "start directly from CPG": (CPG("cpg1"), Lister(), Lister(cpg("cpg1", parent="cpg2"), cpg("cpg2")), "",
                                [CPG("cpg1"), CPG("cpg2")]),
    "early stop via visitFn": (PG1, Lister(pg("pg1", parent="cpg1")), Lister(cpg("cpg1", parent="cpg2"), cpg("cpg2")),
                               "cpg1", [PG1, CPG("cpg1")]),
    "cycle detection between CPGs": (PG1, Lister(pg("pg1", parent="cpg1")),
                                     Lister(cpg("cpg1", parent="cpg2"), cpg("cpg2", parent="cpg1")), "",
                                     [PG1, CPG("cpg1"), CPG("cpg2")]),
    "missing PG in lister": (pod_group_key(NS, "missing-pg"), Lister(), Lister(), "", []),
    "missing parent CPG in lister stops gracefully": (PG1, Lister(pg("pg1", parent="missing-cpg")), Lister(), "",
                                                      [PG1]),
}


@pytest.mark.parametrize("name", list(TRAVERSE), ids=list(TRAVERSE))
def test_traverse_hierarchy_up(name):
    start, pod_groups, composites, stop_at, want = TRAVERSE[name]
    visited = []

    def visit(key, pod_group, composite):
        visited.append(key)
        return key.name == stop_at

    traverse_hierarchy_up(NS, start, pod_groups, composites, visit)
    assert visited == want


def test_traverse_stops_at_the_tree_depth():
    """At most WorkloadMaxTreeDepth (4) groups are visited, even up a longer (invalid) chain."""
    chain = [cpg(f"c{i}", parent=f"c{i + 1}") for i in range(6)]
    visited = []
    traverse_hierarchy_up(NS, PG1, Lister(pg("pg1", parent="c0")), Lister(*chain),
                          lambda k, a, b: visited.append(k) or False)
    assert visited == [PG1, CPG("c0"), CPG("c1"), CPG("c2")]


P1 = pod("p1", group="pg1")

# TestGetHighestAllAncestor: (pod, PodGroups, CompositePodGroups or None for a nil lister, key)
HIGHEST_ALL = {
    "pod without group": (pod("p1"), [], None, None),
    "pod group missing from the lister": (P1, [], None, None),
    "pod group disruption mode single": (P1, [pg("pg1")], None, None),
    "pod group disruption mode All": (P1, [pg("pg1", mode=ALL)], None, PG1),
    "parent CPG disruption mode All, child PG disruption mode single": (
        P1, [pg("pg1", parent="cpg1")], [cpg("cpg1", mode=ALL)], CPG("cpg1")),
    "grandparent CPG disruption mode All, parent CPG disruption mode single, child PG disruption mode single": (
        P1, [pg("pg1", parent="cpg1")], [cpg("cpg1", parent="cpg2"), cpg("cpg2", mode=ALL)], CPG("cpg2")),
    "highest All parent wins (both have disruption mode All)": (
        P1, [pg("pg1", parent="cpg1", mode=ALL)], [cpg("cpg1", mode=ALL)], CPG("cpg1")),
    "pod group missing from cache lister": (P1, [], [], None),
    "parent CPG missing from cache lister, child PG All returned": (P1, [pg("pg1", parent="cpg1", mode=ALL)], [],
                                                                    PG1),
}


@pytest.mark.parametrize("name", list(HIGHEST_ALL), ids=list(HIGHEST_ALL))
def test_get_highest_all_ancestor(name):
    p, pod_groups, composites, want = HIGHEST_ALL[name]
    assert get_highest_all_ancestor(p, Lister(*pod_groups), None if composites is None else Lister(*composites)) \
        == want


NOW, BEFORE = 1000.0, 500.0
C, G, S = "compositepodgroup", POD_GROUP_KEY_TYPE, POD_KEY_TYPE


def victim(priority, key_type, n=1, start=NOW):
    return Victim([PodInfo(make_pod(f"v{i}")) for i in range(n)], priority, start, key_type)


# TestMoreImportantVictim, the CompositePodGroup rows: (vi1, vi2, want)
MORE_IMPORTANT = {
    "CPG vs Pod, same priority (CPG wins)": (victim(10, C), victim(10, S), True),
    "Pod vs CPG, same priority (CPG wins)": (victim(10, S), victim(10, C), False),
    "CPG vs PG, same priority (CPG wins)": (victim(10, C), victim(10, G), True),
    "PG vs CPG, same priority (CPG wins)": (victim(10, G), victim(10, C), False),
    "CPG vs PG, PG higher priority (higher priority wins)": (victim(10, C), victim(20, G), False),
    "PG vs CPG, PG higher priority (higher priority wins)": (victim(20, G), victim(10, C), True),
    "CPG vs PG, CPG smaller size, same priority (CPG rank wins over size)": (victim(10, C), victim(10, G, 2), True),
    "CPG vs PG, CPG newer start time, same priority (CPG rank wins over start time)": (
        victim(10, C, start=NOW), victim(10, G, start=BEFORE), True),
    "both CPGs, vi1 larger (larger size wins)": (victim(10, C, 2), victim(10, C, 1), True),
    "both CPGs, vi2 larger (larger size wins)": (victim(10, C, 1), victim(10, C, 2), False),
    "both CPGs, same size, vi1 older (earlier start time wins)": (victim(10, C, 2, BEFORE), victim(10, C, 2, NOW), True),
    "both CPGs, same size, vi2 older (earlier start time wins)": (victim(10, C, 2, NOW), victim(10, C, 2, BEFORE),
                                                                  False),
}


@pytest.mark.parametrize("name", list(MORE_IMPORTANT), ids=list(MORE_IMPORTANT))
def test_more_important_victim_composite(name):
    v1, v2, want = MORE_IMPORTANT[name]
    assert more_important_victim(v1, v2) is want


def test_resolve_composite_preemption_policy():
    """resolveCompositePreemptionPolicy: the CompositePodGroup's field with PodGroupPreemptionPolicy
    (unset: PreemptLowerPriority), else Never if a member says so."""
    never = make_pod("n").replace(preemption_policy="Never")
    plain = make_pod("p")
    assert resolve_composite_preemption_policy(cpg("c").replace(preemption_policy="Never"), [plain], True) == "Never"
    assert resolve_composite_preemption_policy(cpg("c"), [never], True) == "PreemptLowerPriority"
    assert resolve_composite_preemption_policy(cpg("c").replace(preemption_policy="Never"), [plain], False) == \
        "PreemptLowerPriority"
    assert resolve_composite_preemption_policy(cpg("c"), [plain, never], False) == "Never"


# types_test.go TestNewPodGroupPreemptorResolvesPreemptionPolicy, the CompositePodGroup rows, through
# newPodGroupPreemptor (PodGroupPreemptor.of) of a composite entity: (cpg policy, pods' policies,
# PodGroupPreemptionPolicy, wanted)
CPG_RESOLVE_POLICY = {
    "PreemptionPolicy is resolved from pods when CompositePodGroup is active: PreemptLowerPriority when no pod is "
    "PreemptNever": (None, ["PreemptLowerPriority", None], False, "PreemptLowerPriority"),
    "PreemptionPolicy is resolved from pods when CompositePodGroup is active: PreemptNever when any pod is "
    "PreemptNever": (None, ["Never", "PreemptLowerPriority"], False, "Never"),
    "PreemptionPolicy PreemptNever is resolved from CompositePodGroup, ignoring policy in pod, with "
    "PodGroupPreemptionPolicy enabled": ("Never", ["PreemptLowerPriority"], True, "Never"),
    "PreemptionPolicy PreemptLowerPriority is resolved from CompositePodGroup, ignoring different policies in pods, "
    "with PodGroupPreemptionPolicy enabled": ("PreemptLowerPriority", ["PreemptLowerPriority", "Never"], True,
                                              "PreemptLowerPriority"),
    "PreemptionPolicy is resolved from pods when CompositePodGroup has policy but PodGroupPreemptionPolicy is "
    "disabled": ("Never", ["PreemptLowerPriority", None], False, "PreemptLowerPriority"),
    "PreemptionPolicy defaults to PreemptLowerPriority when CompositePodGroup has no policy set with "
    "PodGroupPreemptionPolicy enabled, even if pods are PreemptNever": (None, ["Never"], True, "PreemptLowerPriority"),
}


class _TestPodGroupInfo:
    """testPodGroupInfo: a composite entity's objects and unscheduled pods."""

    def __init__(self, cpg, pods):
        self.pod_group, self.composite_pod_group, self._pods = None, cpg, pods

    def unscheduled_pods(self):
        return self._pods


@pytest.mark.parametrize("name", list(CPG_RESOLVE_POLICY), ids=list(CPG_RESOLVE_POLICY))
def test_new_pod_group_preemptor_of_a_composite_entity(name):
    from fastsched.plugins.defaultpreemption.podgroup_preemption import PodGroupPreemptor, _GroupPreemptor
    policy, pod_policies, gate, want = CPG_RESOLVE_POLICY[name]
    root = CompositePodGroup(name="cpg1", namespace=NS, priority=7, preemption_policy=policy, uid="cpg1-uid")
    pods = [make_pod(f"p-{i}").replace(preemption_policy=p) for i, p in enumerate(pod_policies)]
    preemptor = PodGroupPreemptor.of(_TestPodGroupInfo(root, pods), gate)
    assert preemptor.preemption_policy == want
    # the root CompositePodGroup's priority and kind (CompositePodGroupPriority, getType), and the
    # executor's preemptor (compositePodGroupExecutorPreemptor: its object, UID and type)
    assert (preemptor.priority, preemptor.type(), preemptor.composite_pod_group) == (7, "compositepodgroup", root)
    group = _GroupPreemptor(_TestPodGroupInfo(root, pods), preemptor)
    assert (group.obj, group.uid, group.type) == (root, "cpg1-uid", "compositepodgroup")
