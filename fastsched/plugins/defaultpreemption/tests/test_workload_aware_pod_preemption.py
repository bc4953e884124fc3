"""Per-pod preemption with GenericWorkload on: victims are units (upstream v1.37.2
``default_preemption_test.go`` ``TestSelectVictimsOnNode``, every row: its "Workload Aware" and
"Cross-node PodGroup" rows with GenericWorkload, the others without; ``preemption.go`` ``GetVictimsOnNode``/``getCrossNodesVictims``).

As upstream's test: nodes of ``veryLargeRes`` (500m cpu, 500 memory) labelled hostname/zone from
their ``name/zone`` spec, NodeResourcesFit at PreFilter and Filter (plus InterPodAffinity or
PodTopologySpread where the row registers them), the PreFilter run on the preemptor, then
SelectVictimsOnNode on the main node. Priorities low 0, mid 100, high 1000, very high 10000."""
from __future__ import annotations

import random
from typing import Any

import pytest

from fastsched.api.compositepodgroup import CompositePodGroup
from fastsched.api.objects import PodSchedulingGroup
from fastsched.api.scheduling import DisruptionMode, PodGroup, PodGroupSchedulingPolicy
from fastsched.config.types import KubeSchedulerProfile, Plugin, Plugins, PluginSet
from fastsched.features import FeatureGates
from fastsched.framework import CycleState
from fastsched.framework.status import Code
from fastsched.plugins import in_tree_registry
from fastsched.plugins.defaultpreemption import NAME
from fastsched.runtime import new_framework
from fastsched.scheduler.cache import Cache

from .support import HIGH, LARGE, LOW, MEDIUM, MID, SMALL, VERY_HIGH, VERY_LARGE, node, pdb, pod

ANTI_FOO_ZONE = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    {"labelSelector": {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}, "topologyKey": "zone"}]}}
SPREAD_FOO_ZONE = [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                    "labelSelector": {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}}]


def group(name, priority, mode="all") -> PodGroup:
    return PodGroup(name=name, namespace="default", uid=name, scheduling_policy=PodGroupSchedulingPolicy(basic=True),
                    disruption_mode=DisruptionMode(all=mode == "all", single=mode == "single"), priority=priority)


def member(name, node_name, group_name, priority, req=None, labels=None, uid=None):
    p = pod(name, node_name=node_name, priority=priority, req=req, labels=labels)
    return p.replace(uid=uid or name, scheduling_group=PodSchedulingGroup(group_name))


def preemptor(priority, req=None, labels=None, **spec):
    """The preemptor (``spec``: manifest fields, e.g. ``affinity``, ``topologySpreadConstraints``)."""
    if not spec:
        return pod("p", priority=priority, req=req, labels=labels)
    from fastsched.api import Pod
    manifest = {"metadata": {"name": "p", "namespace": "default", "uid": "p", "labels": dict(labels or {})},
                "spec": {"priority": priority, "containers": [{"name": "c", "image": "x"}], **spec}}
    return Pod.from_manifest(manifest, validate=False)


CASES: dict[str, Any] = {
    # the rows without GenericWorkload (upstream's zero feature.Features): victims are single pods
    "Basic: Preempt single lower priority pod": dict(
        nodes=["node1"], main="node1", generic_workload=False,
        pods=[pod("victim", node_name="node1", priority=LOW, req=LARGE)],
        preemptor=preemptor(HIGH, LARGE), want={"victim"}),
    "Priority: Prefer lower priority victim": dict(
        nodes=["node1"], main="node1", generic_workload=False,
        pods=[pod("high-prio", node_name="node1", priority=HIGH, req=SMALL),
              pod("mid-prio", node_name="node1", priority=MID, req=SMALL),
              pod("low-prio", node_name="node1", priority=LOW, req=SMALL)],
        preemptor=preemptor(HIGH, LARGE), want={"low-prio"}),
    "PDB: Prefer non-violating victim with higher priority over violating victim with lower priority": dict(
        nodes=["node1"], main="node1", generic_workload=False,
        pods=[pod("victim-pdb", node_name="node1", labels={"app": "foo"}, priority=LOW, req=MEDIUM),
              pod("victim-no-pdb", node_name="node1", priority=MID, req=MEDIUM)],
        pdbs=[pdb("pdb", {"app": "foo"}, allowed=0)], preemptor=preemptor(HIGH, LARGE), want={"victim-no-pdb"}),
    "PDB: Prefer lower prioirity pod for preemption, when preemption without pdb violation is not possible": dict(
        nodes=["node1"], main="node1", generic_workload=False,
        pods=[pod("v1", node_name="node1", labels={"app": "foo"}, priority=LOW, req=MEDIUM),
              pod("v2", node_name="node1", labels={"app": "foo"}, priority=MID, req=MEDIUM)],
        pdbs=[pdb("pdb", {"app": "foo"}, allowed=0)], preemptor=preemptor(HIGH, LARGE), want={"v1"}, violating=1),
    "Failure: Cannot preempt the victim with higher priority": dict(
        nodes=["node1"], main="node1", generic_workload=False,
        pods=[pod("victim", node_name="node1", priority=HIGH)], preemptor=preemptor(MID),
        status=Code.UNSCHEDULABLE_AND_UNRESOLVABLE),
    "Failure: Cannot preempt if node is empty": dict(
        nodes=["node1"], main="node1", generic_workload=False, pods=[], preemptor=preemptor(MID),
        status=Code.UNSCHEDULABLE_AND_UNRESOLVABLE),
    "Workload Aware: Atomic preemption of PodGroup": dict(
        nodes=["node1"], main="node1", groups=[group("pg1", LOW)],
        pods=[member("g1-1", "node1", "pg1", LOW, SMALL, uid="g1"), member("g1-2", "node1", "pg1", LOW, MEDIUM, uid="g2")],
        preemptor=preemptor(HIGH, LARGE), want={"g1-1", "g1-2"}),
    "Workload Aware: prefer single pod over podGroup for preemption candidate": dict(
        nodes=["node1"], main="node1", groups=[group("pg1", LOW)],
        pods=[pod("p1", node_name="node1", priority=LOW, req=SMALL),
              member("g1-1", "node1", "pg1", LOW, SMALL, uid="g1"), member("g1-2", "node1", "pg1", LOW, SMALL, uid="g2")],
        preemptor=preemptor(HIGH, LARGE), want={"p1"}),
    "Workload Aware: preempt lower priority pod group instead of higher priority single pod": dict(
        nodes=["node1"], main="node1", groups=[group("pg1", LOW)],
        pods=[pod("p1", node_name="node1", priority=HIGH, req=MEDIUM), member("g1-1", "node1", "pg1", LOW, MEDIUM, uid="g1")],
        preemptor=preemptor(VERY_HIGH, LARGE), want={"g1-1"}),
    "Workload Aware: preempt lower priority single pod instead of higher priority pod group": dict(
        nodes=["node1"], main="node1", groups=[group("pg1", HIGH)],
        pods=[pod("p1", node_name="node1", priority=LOW, req=MEDIUM), member("g1-1", "node1", "pg1", HIGH, MEDIUM, uid="g1")],
        preemptor=preemptor(VERY_HIGH, LARGE), want={"p1"}),
    "Workload Aware: PDB: PodGroup as victim with 2 PDB violations": dict(
        nodes=["node1"], main="node1", groups=[group("pg1", LOW)],
        pods=[member("g1-1", "node1", "pg1", LOW, MEDIUM, {"app": "foo"}, uid="g1"),
              member("g1-2", "node1", "pg1", LOW, MEDIUM, {"app": "foo"}, uid="g2")],
        pdbs=[pdb("pdb", {"app": "foo"})], preemptor=preemptor(HIGH, LARGE), want={"g1-1", "g1-2"}, violating=2),
    "Workload Aware: PDB: Prefer non-violating PodGroup over lower-priority violating PodGroup (DisruptionModeAll)": dict(
        nodes=["node1"], main="node1", groups=[group("pg-violating", LOW), group("pg-non-violating", MID)],
        pods=[member("g1-1", "node1", "pg-violating", LOW, MEDIUM, {"app": "foo"}),
              member("g2-1", "node1", "pg-non-violating", MID, MEDIUM)],
        pdbs=[pdb("pdb", {"app": "foo"})], preemptor=preemptor(HIGH, LARGE), want={"g2-1"}),
    "Workload Aware: PDB: Prefer non-violating PodGroup over lower-priority violating PodGroup (DisruptionModeSingle)": dict(
        nodes=["node1"], main="node1", groups=[group("pg-violating", LOW, "single"), group("pg-non-violating", MID, "single")],
        pods=[member("g1-1", "node1", "pg-violating", LOW, MEDIUM, {"app": "foo"}),
              member("g2-1", "node1", "pg-non-violating", MID, MEDIUM)],
        pdbs=[pdb("pdb", {"app": "foo"})], preemptor=preemptor(HIGH, LARGE), want={"g2-1"}),
    "Cross-node PodGroup: zone anti-affinity blocks reprieve via PreFilterExtension on node-a": dict(
        nodes=["node-a/zone1", "node-b/zone1"], main="node-a", plugins=["InterPodAffinity"], groups=[group("pg1", LOW)],
        pods=[member("pod-x", "node-a", "pg1", LOW), member("pod-y", "node-b", "pg1", LOW, labels={"foo": ""})],
        preemptor=preemptor(HIGH, affinity=ANTI_FOO_ZONE), want={"pod-x", "pod-y"}),
    "Cross-node PodGroup: zone anti-affinity blocks reprieve via PreFilterExtension on node-b": dict(
        nodes=["node-a/zone1", "node-b/zone1"], main="node-b", plugins=["InterPodAffinity"], groups=[group("pg1", LOW)],
        pods=[member("pod-x", "node-a", "pg1", LOW), member("pod-y", "node-b", "pg1", LOW, labels={"foo": ""})],
        preemptor=preemptor(HIGH, affinity=ANTI_FOO_ZONE), want={"pod-x", "pod-y"}),
    "Cross-node PodGroup: zone anti-affinity reprieve succeeds when remote pod lacks constraint label (negative control)": dict(
        nodes=["node-a/zone1", "node-b/zone1"], main="node-a", plugins=["InterPodAffinity"], groups=[group("pg1", LOW)],
        pods=[member("pod-x", "node-a", "pg1", LOW), member("pod-y", "node-b", "pg1", LOW)],
        preemptor=preemptor(HIGH, affinity=ANTI_FOO_ZONE), want=set()),
    "Cross-node PodGroup: topology spread blocks reprieve via PreFilterExtension on node-a": dict(
        nodes=["node-a/zone1", "node-b/zone1", "node-c/zone2"], main="node-a", plugins=["PodTopologySpread"],
        groups=[group("pg1", LOW)],
        pods=[member("pod-a", "node-a", "pg1", LOW, labels={"foo": ""}), member("pod-b", "node-b", "pg1", LOW, labels={"foo": ""}),
              pod("pod-c", node_name="node-c", priority=VERY_HIGH, labels={"foo": ""})],
        preemptor=preemptor(HIGH, labels={"foo": ""}, topologySpreadConstraints=SPREAD_FOO_ZONE),
        want={"pod-a", "pod-b"}),
    "Cross-node PodGroup: topology spread blocks reprieve via PreFilterExtension on node-c": dict(
        nodes=["node-a/zone1", "node-b/zone1", "node-c/zone2"], main="node-c", plugins=["PodTopologySpread"],
        groups=[group("pg1", LOW)],
        pods=[member("pod-a", "node-a", "pg1", LOW, labels={"foo": ""}), member("pod-b", "node-b", "pg1", LOW, labels={"foo": ""}),
              pod("pod-c", node_name="node-c", priority=VERY_HIGH, labels={"foo": ""})],
        preemptor=preemptor(HIGH, labels={"foo": ""}, topologySpreadConstraints=SPREAD_FOO_ZONE), want=None,
        status=Code.UNSCHEDULABLE_AND_UNRESOLVABLE),
    "Cross-node PodGroup: whole pod group across multiple nodes expected to be preempted": dict(
        nodes=["node-a", "node-b"], main="node-a", groups=[group("pg1", LOW)],
        pods=[member("pod-a", "node-a", "pg1", LOW, LARGE), member("pod-b", "node-b", "pg1", LOW, LARGE)],
        preemptor=preemptor(HIGH, LARGE), want={"pod-a", "pod-b"}),
}


def _gates(generic_workload: bool = True) -> FeatureGates:
    return FeatureGates({"SchedulerAsyncPreemption": False, "GenericWorkload": generic_workload})


def _profile(extra) -> KubeSchedulerProfile:
    plugins = Plugins()
    plugins.queue_sort = PluginSet([Plugin("PrioritySort")])
    plugins.bind = PluginSet([Plugin("DefaultBinder")])
    plugins.pre_filter = PluginSet([Plugin(n) for n in ["NodeResourcesFit", *extra]])
    plugins.filter = PluginSet([Plugin(n) for n in ["NodeResourcesFit", *extra]])
    plugins.post_filter = PluginSet([Plugin(NAME)])
    return KubeSchedulerProfile(scheduler_name="test", plugins=plugins)


@pytest.mark.parametrize("name", list(CASES), ids=list(CASES))
def test_select_victims_on_node_workload_aware(name):
    case = CASES[name]
    generic_workload = case.get("generic_workload", True)
    cache = Cache(generic_workload=generic_workload)
    keys = ("hostname", "zone", "region")
    for spec in case["nodes"]:
        parts = spec.split("/")
        cache.add_node(node(parts[0], cpu=VERY_LARGE["cpu"], memory=VERY_LARGE["memory"],
                            labels=dict(zip(keys, parts))))
    for g in case.get("groups", ()):
        cache.add_pod_group(g)
    for p in case["pods"]:
        cache.add_pod(p)
    p = case["preemptor"]
    fw = new_framework(in_tree_registry(), _profile(case.get("plugins", ())), snapshot_shared_lister=cache.snapshot,
                       rng=random.Random(0), feature_gates=_gates(generic_workload))
    fw.pod_group_manager = cache
    plugin = fw.plugin(NAME)
    state = CycleState()
    _, st, _ = fw.run_pre_filter_plugins(state, p, cache.snapshot.batch())
    assert st is None or st.is_success(), st
    main = cache.snapshot.get(case["main"]).snapshot()
    pods, violating, status = plugin.select_victims_on_node(state.clone(), p, main,
                                                           [x for x in case.get("pdbs", ())])
    want_code = case.get("status", Code.SUCCESS)
    assert (Code.SUCCESS if status is None else status.code()) == want_code, status
    if want_code != Code.SUCCESS:
        return
    assert violating == case.get("violating", 0)
    assert {x.name for x in pods} == case["want"]


# -- TestCustomOrdering (every row; GenericWorkload, CompositePodGroup where the row sets it): a custom MoreImportantVictim
def _start(p):
    return float("inf") if p.start_time is None else p.start_time


def _by_oldest_start(v1, v2):
    v1.pods().sort(key=lambda pi: _start(pi.pod))
    v2.pods().sort(key=lambda pi: _start(pi.pod))
    return _start(v1.pods()[0].pod) < _start(v2.pods()[0].pod)


def _by_name(v1, v2):
    v1.pods().sort(key=lambda pi: pi.pod.name)
    v2.pods().sort(key=lambda pi: pi.pod.name)
    return v1.pods()[0].pod.name < v2.pods()[0].pod.name


def _standalone_over_group(v1, v2):
    _by_name(v1, v2)
    if v1.is_group() != v2.is_group():
        return not v1.is_group()
    from fastsched.plugins.defaultpreemption.podgroup_preemption import more_important_victim
    return more_important_victim(v1, v2)


def _smaller_group_over_larger(v1, v2):
    _by_name(v1, v2)
    if v1.is_group() and v2.is_group() and len(v1.pods()) != len(v2.pods()):
        return len(v1.pods()) < len(v2.pods())
    from fastsched.plugins.defaultpreemption.podgroup_preemption import more_important_victim
    return more_important_victim(v1, v2)


def _by_group_name(v1, v2):
    _by_name(v1, v2)
    if v1.is_group() and v2.is_group():
        g1, g2 = v1.pods()[0].pod.pod_group_name, v2.pods()[0].pod.pod_group_name
        if g1 and g2 and g1 != g2:
            return g1 < g2
    from fastsched.plugins.defaultpreemption.podgroup_preemption import more_important_victim
    return more_important_victim(v1, v2)


E0, E1, E2 = 0.0, 1e-9, 2e-9  # upstream's epochTime, epochTime1, epochTime2 (nanoseconds apart)


def _v(name, priority, req, start, group=None, uid=None):
    p = pod(name, node_name="node1", priority=priority, req=req, start=start).replace(uid=uid or name)
    return p.replace(scheduling_group=PodSchedulingGroup(group)) if group else p


def _all(name):
    return PodGroup(name=name, namespace="default", uid=name, scheduling_policy=PodGroupSchedulingPolicy(basic=True),
                    disruption_mode=DisruptionMode(all=True))


def _in_cpg(name, parent):
    return PodGroup(name=name, namespace="default", uid=name, scheduling_policy=PodGroupSchedulingPolicy(basic=True),
                    parent_composite_pod_group_name=parent, priority=LOW)


def _cpg_all(name):
    return CompositePodGroup(name=name, namespace="default", uid=name, disruption_mode=DisruptionMode(all=True),
                             priority=LOW)


@pytest.fixture
def composite_gate(monkeypatch):
    """The gate is not switchable for users yet: switchable for these tests (upstream's rows set it)."""
    import dataclasses

    from fastsched.features import COMPOSITE_POD_GROUP, KNOWN_GATES
    monkeypatch.setitem(KNOWN_GATES, COMPOSITE_POD_GROUP,
                        dataclasses.replace(KNOWN_GATES[COMPOSITE_POD_GROUP], switchable=True))


@pytest.mark.parametrize("name,order,pods,groups,expected", [
    ("select newest pods", _by_oldest_start,
     [_v("v1", LOW, MEDIUM, E2), _v("v2", LOW, MEDIUM, E0), _v("v3", LOW, MEDIUM, E1)], [], ["v3", "v1"]),
    ("select alphabetically-last pods", _by_name,
     [_v("foo", LOW, MEDIUM, E0, uid="v1"), _v("bar", LOW, MEDIUM, E0, uid="v2"), _v("baz", MID, MEDIUM, E0, uid="v3")],
     [], ["baz", "foo"]),
    ("select pod group over standalone pod due to custom ordering", _standalone_over_group,
     [_v("v1", LOW, MEDIUM, E0), _v("v2", LOW, SMALL, E0, "pg1"), _v("v3", LOW, SMALL, E0, "pg1")], [_all("pg1")],
     ["v2", "v3"]),
    ("select larger pod group over smaller pod group due to custom ordering", _smaller_group_over_larger,
     [_v("v1", LOW, SMALL, E0, "pg-small"), _v("v2", LOW, SMALL, E0, "pg-large"), _v("v3", LOW, SMALL, E0, "pg-large")],
     [_all("pg-small"), _all("pg-large")], ["v2", "v3"]),
    ("select pod group by name alphabetically due to custom ordering", _by_group_name,
     [_v("v1", LOW, MEDIUM, E1, "pg-a"), _v("v2", LOW, MEDIUM, E0, "pg-z")], [_all("pg-a"), _all("pg-z")], ["v2"]),
    # with CompositePodGroup (and TopologyAwareWorkloadScheduling) on: the units are the all-mode CPGs
    ("select composite pod group over standalone pod due to custom ordering", _standalone_over_group,
     [_v("v1", LOW, MEDIUM, E0), _v("v2", LOW, SMALL, E0, "pg1"), _v("v3", LOW, SMALL, E0, "pg2")],
     [_in_cpg("pg1", "cpg1"), _in_cpg("pg2", "cpg1"), _cpg_all("cpg1")], ["v2", "v3"]),
    ("select larger composite pod group over smaller composite pod group due to custom ordering",
     _smaller_group_over_larger,
     [_v("v1", LOW, SMALL, E0, "pg-small"), _v("v2", LOW, SMALL, E0, "pg-large1"), _v("v3", LOW, SMALL, E0, "pg-large2")],
     [_in_cpg("pg-small", "cpg-small"), _in_cpg("pg-large1", "cpg-large"), _in_cpg("pg-large2", "cpg-large"),
      _cpg_all("cpg-small"), _cpg_all("cpg-large")], ["v2", "v3"]),
], ids=lambda x: x if isinstance(x, str) else "")
def test_custom_ordering(composite_gate, name, order, pods, groups, expected):
    composite = any(isinstance(g, CompositePodGroup) for g in groups)
    cache = Cache(generic_workload=True, composite_pod_group=composite)
    cache.add_node(node("node1", cpu=VERY_LARGE["cpu"], memory=VERY_LARGE["memory"]))
    for g in groups:
        if isinstance(g, CompositePodGroup):
            cache.add_composite_pod_group(g)
        else:
            cache.add_pod_group(g)
    for p in pods:
        cache.add_pod(p)
    gates = FeatureGates({"SchedulerAsyncPreemption": False, "GenericWorkload": True,
                          "TopologyAwareWorkloadScheduling": composite, "CompositePodGroup": composite})
    fw = new_framework(in_tree_registry(), _profile(()), snapshot_shared_lister=cache.snapshot,
                       rng=random.Random(0), feature_gates=gates)
    fw.pod_group_manager = cache
    plugin = fw.plugin(NAME)
    plugin.more_important_victim = order
    p2 = pod("p2", priority=HIGH, req=LARGE)
    state = CycleState()
    fw.run_pre_filter_plugins(state, p2, cache.snapshot.batch())
    nodes = list(cache.snapshot.batch())
    offset, num = plugin.get_offset_and_num_candidates(len(nodes))
    candidates, _, _ = plugin.evaluator.dry_run_preemption(state, p2, nodes, [], offset, num)
    assert len(candidates) == 1
    got = [v.name for v in candidates[0].victims.pods]
    if groups:  # (upstream: the order inside a group comes from a map)
        got, expected = sorted(got), sorted(expected)
    assert got == expected


def test_pod_eligible_to_preempt_others_victim_priority_from_its_pod_group():
    """TestPodEligibleToPreemptOthers: "Preemptor with SchedulingGroup, victim priority overridden
    by PodGroup in victim namespace" — the terminating victim counts with its group's (low)
    priority, so the preemptor waits for it."""
    cache = Cache(generic_workload=True)
    cache.add_node(node("node1"))
    cache.add_pod_group(PodGroup(name="pg1", namespace="ns2", uid="pg1", priority=LOW,
                                 scheduling_policy=PodGroupSchedulingPolicy(basic=True)))
    victim = pod("v1", node_name="node1", priority=VERY_HIGH, namespace="ns2", deleting=True,
                 conditions=[{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}])
    cache.add_pod(victim.replace(scheduling_group=PodSchedulingGroup("pg1")))
    fw = new_framework(in_tree_registry(), _profile(()), snapshot_shared_lister=cache.snapshot,
                       rng=random.Random(0), feature_gates=_gates())
    fw.pod_group_manager = cache
    plugin = fw.plugin(NAME)
    p = pod("p", priority=HIGH, namespace="ns1", nominated="node1").replace(scheduling_group=PodSchedulingGroup("pg1"))
    assert plugin.pod_eligible_to_preempt_others(p, None) == (False, "not eligible due to a terminating pod on the "
                                                                     "nominated node.")
    plugin.enable_generic_workload = False  # the victim's own (very high) priority: eligible
    assert plugin.pod_eligible_to_preempt_others(p, None) == (True, "")
