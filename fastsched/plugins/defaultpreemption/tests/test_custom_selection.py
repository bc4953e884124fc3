"""Upstream v1.37.2 ``default_preemption_test.go`` ``TestCustomSelection``, every row: a custom
``IsEligiblePodFunc`` (``is_eligible_pod``) decides which victims may be preempted; with
GenericWorkload it is asked about each unit (a ``disruptionMode: all`` group, or with
CompositePodGroup its hierarchy's top) on each node the unit runs on.

As upstream's test: nodes of ``veryLargeRes``, NodeResourcesFit at PreFilter and Filter, the pods,
PodGroups and CompositePodGroups in the cache (GenericWorkload and CompositePodGroup with
TopologyAwareWorkloadScheduling set per row), then DryRunPreemption over every node; the result is
compared as {node: victims sorted by name}. Priorities low 0, mid 100, high 1000.
"""
from __future__ import annotations

import random

import pytest

from fastsched.api.compositepodgroup import CompositePodGroup
from fastsched.api.objects import PodSchedulingGroup
from fastsched.api.scheduling import DisruptionMode, PodGroup, PodGroupSchedulingPolicy
from fastsched.features import FeatureGates
from fastsched.framework import CycleState
from fastsched.plugins import in_tree_registry
from fastsched.plugins.defaultpreemption import NAME
from fastsched.runtime import new_framework
from fastsched.scheduler.cache import Cache

from .support import HIGH, LARGE, LOW, MEDIUM, MID, SMALL, VERY_LARGE, node, pod
from .test_workload_aware_pod_preemption import _profile

GW, CPG = "GenericWorkload", "CompositePodGroup"


# -- upstream's IsEligiblePodFunc factories
def victim_labels_are_eligible(key, val):
    return lambda node_info, victim, preemptor: all(pi.pod.labels.get(key) == val for pi in victim.pods())


def node_name_is_eligible(name):
    return lambda node_info, victim, preemptor: node_info.node().name == name


def priority_below_threshold_cannot_preempt(min_preempting):
    return lambda node_info, victim, preemptor: (preemptor.priority or 0) >= min_preempting


def priority_above_threshold_cannot_be_preempted(max_preemptible):
    return lambda node_info, victim, preemptor: victim.priority() <= max_preemptible


def v(name, node_name, priority, req, labels=None, group=None):
    p = pod(name, node_name=node_name, priority=priority, req=req, labels=labels, start=0.0)
    return p.replace(scheduling_group=PodSchedulingGroup(group)) if group else p


def pg(name, parent=None, priority=None, all_mode=False):
    return PodGroup(name=name, namespace="default", uid=name, scheduling_policy=PodGroupSchedulingPolicy(basic=True),
                    parent_composite_pod_group_name=parent, priority=priority,
                    disruption_mode=DisruptionMode(all=True) if all_mode else DisruptionMode(single=True))


def cpg_all(name, priority):
    return CompositePodGroup(name=name, namespace="default", uid=name, priority=priority,
                             disruption_mode=DisruptionMode(all=True))


NO, YES = {"preemptible": "no"}, {"preemptible": "yes"}


def label_pods():
    return [v("v1", "node1", MID, LARGE, NO), v("v2", "node2", MID, LARGE, YES), v("v3", "node3", LOW, LARGE, YES),
            v("v4", "node4", LOW, LARGE)]


def node1_pods(v1_req):
    return [v("v1", "node1", HIGH, v1_req), v("v2", "node1", MID, SMALL), v("v3", "node1", LOW, SMALL),
            v("v4", "node2", MID, LARGE), v("v5", "node3", LOW, LARGE)]


def three_pods():
    return [v("v1", "node1", HIGH, LARGE), v("v2", "node2", MID, LARGE), v("v3", "node3", LOW, LARGE)]


N4, N3, N2 = ["node1", "node2", "node3", "node4"], ["node1", "node2", "node3"], ["node1", "node2"]
CPG_GROUPS = [pg("pg1", parent="cpg1", priority=LOW), pg("pg2", parent="cpg1", priority=LOW)]

# name -> (eligible, nodes, preemptor (name, priority), pods, pod groups, composite pod groups, gates, expected)
ROWS: dict[str, tuple] = {
    "filter for matching pod label: high priority": (
        victim_labels_are_eligible("preemptible", "yes"), N4, ("p1", HIGH), label_pods(), [], [], (),
        {"node2": ["v2"], "node3": ["v3"]}),
    "filter for matching pod label: mid priority": (
        victim_labels_are_eligible("preemptible", "yes"), N4, ("p2", MID), label_pods(), [], [], (),
        {"node3": ["v3"]}),
    "filter for matching pod label: low priority": (
        victim_labels_are_eligible("preemptible", "yes"), N4, ("p3", LOW), label_pods(), [], [], (), {}),
    "filter for matching victim node: high priority": (
        node_name_is_eligible("node1"), N3, ("p3", HIGH), node1_pods(MEDIUM), [], [], (), {"node1": ["v2", "v3"]}),
    "filter for matching victim node: mid priority": (
        node_name_is_eligible("node1"), N3, ("p3", MID), node1_pods(SMALL), [], [], (), {"node1": ["v3"]}),
    "filter for matching victim node: low priority": (
        node_name_is_eligible("node1"), N3, ("p3", LOW), node1_pods(SMALL), [], [], (), {}),
    # highPriority can preempt anything, but not other highPriority
    "only pods at or above specified priority can preempted: high priority": (
        priority_below_threshold_cannot_preempt(HIGH), N3, ("p1", HIGH), three_pods(), [], [], (),
        {"node2": ["v2"], "node3": ["v3"]}),
    # midPriority can't preempt anything
    "only pods at or above specified priority can preempted: mid priority": (
        priority_below_threshold_cannot_preempt(HIGH), N3, ("p2", MID), three_pods(), [], [], (), {}),
    # the lowPriority and midPriority pods can be preempted but not the highPriority pod
    "only pods at or below specified priority can be preempted: high priority": (
        priority_above_threshold_cannot_be_preempted(MID), N3, ("p1", HIGH), three_pods(), [], [], (),
        {"node2": ["v2"], "node3": ["v3"]}),
    "filter for matching pod group: all affected nodes eligible": (
        victim_labels_are_eligible("preemptible", "yes"), N2, ("p1", HIGH),
        [v("v1", "node1", LOW, LARGE, YES, "pg1"), v("v2", "node2", LOW, LARGE, YES, "pg1")],
        [pg("pg1", all_mode=True)], [], (GW,), {"node1": ["v1", "v2"], "node2": ["v1", "v2"]}),
    "filter for matching pod group: one node ineligible rejects entire pod group": (
        node_name_is_eligible("node1"), N2, ("p1", HIGH),
        [v("v1", "node1", LOW, SMALL, group="pg1"), v("v2", "node2", LOW, SMALL, group="pg1"),
         v("v3", "node1", MID, LARGE)],
        [pg("pg1", all_mode=True)], [], (GW,), {"node1": ["v3"]}),
    "filter for matching composite pod group: all affected nodes eligible": (
        victim_labels_are_eligible("preemptible", "yes"), N2, ("p1", HIGH),
        [v("v1", "node1", LOW, LARGE, YES, "pg1"), v("v2", "node2", LOW, LARGE, YES, "pg2")],
        CPG_GROUPS, [cpg_all("cpg1", LOW)], (GW, CPG), {"node1": ["v1", "v2"], "node2": ["v1", "v2"]}),
    "filter for matching composite pod group: one node ineligible rejects entire composite pod group": (
        node_name_is_eligible("node1"), N2, ("p1", HIGH),
        [v("v1", "node1", LOW, SMALL, group="pg1"), v("v2", "node2", LOW, SMALL, group="pg2"),
         v("v3", "node1", MID, LARGE)],
        CPG_GROUPS, [cpg_all("cpg1", LOW)], (GW, CPG), {"node1": ["v3"]}),
}


@pytest.fixture
def composite_gate(monkeypatch):
    """The gate is not switchable for users yet: switchable for these tests (upstream's rows set it)."""
    import dataclasses

    from fastsched.features import COMPOSITE_POD_GROUP, KNOWN_GATES
    monkeypatch.setitem(KNOWN_GATES, COMPOSITE_POD_GROUP,
                        dataclasses.replace(KNOWN_GATES[COMPOSITE_POD_GROUP], switchable=True))


@pytest.mark.parametrize("name", list(ROWS), ids=list(ROWS))
def test_custom_selection(composite_gate, name):
    eligible, nodes, (p_name, p_priority), pods, pgs, cpgs, gates, expected = ROWS[name]
    generic_workload, composite = GW in gates, CPG in gates
    cache = Cache(generic_workload=generic_workload, composite_pod_group=composite)
    for n in nodes:
        cache.add_node(node(n, cpu=VERY_LARGE["cpu"], memory=VERY_LARGE["memory"]))
    for g in pgs:
        cache.add_pod_group(g)
    if composite:
        for c in cpgs:
            cache.add_composite_pod_group(c)
    for p in pods:
        cache.add_pod(p)
    fw = new_framework(in_tree_registry(), _profile(()), snapshot_shared_lister=cache.snapshot, rng=random.Random(0),
                       feature_gates=FeatureGates({"SchedulerAsyncPreemption": False, GW: generic_workload,
                                                   "TopologyAwareWorkloadScheduling": composite, CPG: composite}))
    fw.pod_group_manager = cache
    plugin = fw.plugin(NAME)
    plugin.is_eligible_pod = eligible
    preemptor = pod(p_name, priority=p_priority, req=LARGE)
    state = CycleState()
    fw.run_pre_filter_plugins(state, preemptor, cache.snapshot.batch())
    batch = list(cache.snapshot.batch())
    offset, num = plugin.get_offset_and_num_candidates(len(batch))
    candidates, _, _ = plugin.evaluator.dry_run_preemption(state, preemptor, batch, [], offset, num)
    assert {c.name: sorted(x.name for x in c.victims.pods) for c in candidates} == expected
