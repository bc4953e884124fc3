"""Victim selection over CompositePodGroup hierarchies (upstream v1.37.2
``pkg/scheduler/framework/preemption``: ``types_test.go`` ``TestNewDomainForWorkloadPreemption``,
every row; ``preemption_test.go`` ``TestGetVictimsOnNode``, its CompositePodGroup rows), and the
priority lookups of ``isOngoingPreemption`` (``podgrouppreemption.go:405``) and
``PodEligibleToPreemptOthers`` (``default_preemption.go:467``) over a hierarchy (no upstream row:
our own cases, each failing when the lookup stays flat).

As upstream's tests: the cache gets the nodes, PodGroups, CompositePodGroups (with the gate) and
pods; the PodGroup and CompositePodGroup listers are mocks over the row's maps (the
CompositePodGroup one only with the gate, else None), the states the cache's.
"""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from fastsched.api.compositepodgroup import CompositePodGroup
from fastsched.api.objects import PodSchedulingGroup
from fastsched.api.scheduling import DisruptionMode, PodGroup, PodGroupSchedulingPolicy
from fastsched.framework.composite import COMPOSITE_POD_GROUP_KEY_TYPE
from fastsched.framework.podgroups import POD_GROUP_KEY_TYPE, PodGroupStateError
from fastsched.framework.status import Code, Status
from fastsched.plugins.defaultpreemption.podgroup_preemption import (PodGroupEvaluator, PodGroupPreemptor,
                                                                     new_domain_for_workload_preemption)
from fastsched.scheduler.cache import Cache
from fastsched.scheduler.mutable_snapshot import MutableSnapshot
from fastsched.testing import make_node, make_pod

from .test_podgroup_preemption import PREEMPTED, group_info

ALL, SINGLE = "all", "single"


class MockLister:
    """``mockPodGroupLister`` / ``mockCompositePodGroupLister``: the row's objects by name."""

    def __init__(self, objects: dict):
        self.objects = objects

    def get(self, namespace: str, name: str):
        obj = self.objects.get(name)
        if obj is None:
            raise PodGroupStateError(f"{name} not found")
        return obj


def _mode(mode: str) -> DisruptionMode:
    return DisruptionMode(all=True) if mode == ALL else DisruptionMode(single=True)


def pg(name: str, mode: str, parent: str | None = None, priority: int = 10) -> PodGroup:
    return PodGroup(name=name, namespace="default", uid=name, scheduling_policy=PodGroupSchedulingPolicy(basic=True),
                    disruption_mode=_mode(mode), priority=priority, parent_composite_pod_group_name=parent)


def cpg(name: str, mode: str, parent: str | None = None, priority: int = 10) -> CompositePodGroup:
    return CompositePodGroup(name=name, namespace="default", uid=name, parent_composite_pod_group_name=parent,
                             disruption_mode=_mode(mode), priority=priority)


def pod(name: str, node: str, group: str | None = None, priority: int = 10, terminating: bool = False):
    p = make_pod(name, priority=priority).replace(uid=name)
    if group is not None:
        p = p.replace(scheduling_group=PodSchedulingGroup(group))
    if terminating:
        p = p.replace(deletion_timestamp=0.0, conditions=(PREEMPTED,))
    return p.with_node_name(node)


def members(*groups: str, nodes=("node1", "node2")) -> list:
    """``p1_pgN`` on node1 and ``p2_pgN`` on node2 for each group (upstream's rows' pods)."""
    return [pod(f"p{i + 1}_{g}", n, g) for g in groups for i, n in enumerate(nodes)]


def build(nodes, pods, pgs, cpgs, enabled: bool) -> Cache:
    cache = Cache(generic_workload=True, composite_pod_group=enabled)
    for n in nodes:
        cache.add_node(make_node(n))
    for g in pgs:
        cache.add_pod_group(g)
    if enabled:
        for c in cpgs:
            cache.add_composite_pod_group(c)
    for p in pods:
        cache.add_pod(p)
    return cache


N2 = ["node1", "node2"]


def v(pods: str, nodes: str, priority: int = 10) -> tuple:
    """A wanted victim: (its pods, its affected nodes, its priority)."""
    return frozenset(pods.split()), frozenset(nodes.split()), priority


# name -> (nodes, pods, pod groups, composite pod groups, CompositePodGroup, victims)
DOMAIN_ROWS: dict[str, tuple] = {
    "no pods": (["node1"], [], [], [], False, []),
    "pods without pod groups": (
        N2, [pod("p1", "node1", priority=10), pod("p2", "node2", priority=20)], [], [], False,
        [v("p1", "node1", 10), v("p2", "node2", 20)]),
    "pods with pod group (DisruptionModeAll)": (
        N2, [pod("p1", "node1", "pg1"), pod("p2", "node2", "pg1")], [pg("pg1", ALL, priority=50)], [], False,
        [v("p1 p2", "node1 node2", 50)]),
    "pods with pod group (DisruptionModeSingle)": (
        N2, [pod("p1", "node1", "pg1"), pod("p2", "node2", "pg1", priority=20)], [pg("pg1", SINGLE, priority=50)], [],
        False, [v("p1", "node1", 50), v("p2", "node2", 50)]),
    "mix of pod groups and individual pods": (
        N2, [pod("p1", "node1", "pg1"), pod("p2", "node2", "pg1"), pod("p3", "node1", "pg2", priority=20),
             pod("p4", "node2", priority=30)],
        [pg("pg1", ALL, priority=50), pg("pg2", SINGLE, priority=60)], [], False,
        [v("p1 p2", "node1 node2", 50), v("p3", "node1", 60), v("p4", "node2", 30)]),
    "pods with pod group (DisruptionModeAll) but missing pod group state in cache falls back to local pod preemption": (
        N2, [pod("p1", "node1", "pg1"), pod("p2", "node2", "pg1")], [], [], False,
        [v("p1", "node1"), v("p2", "node2")]),
}
for _on in (True, False):
    _en = "CPG enabled" if _on else "CPG disabled"
    DOMAIN_ROWS.update({
        f"{_en}: root CompositePodGroup with DisruptionModeAll "
        + ("groups descendant pods of all child PodGroups" if _on else "does not group descendant pods"): (
            N2, members("pg1", "pg2"), [pg("pg1", ALL, "cpg1"), pg("pg2", ALL, "cpg1")], [cpg("cpg1", ALL)], _on,
            [v("p1_pg1 p2_pg1 p1_pg2 p2_pg2", "node1 node2")] if _on else
            [v("p1_pg1 p2_pg1", "node1 node2"), v("p1_pg2 p2_pg2", "node1 node2")]),
        f"{_en}: root CompositePodGroup with DisruptionModeSingle "
        + ("does not group descendants of child PodGroups but respects individual PodGroup DisruptionModes" if _on else
           "does not group child PodGroups and resolves PodGroup level DisruptionModes"): (
            N2, members("pg1", "pg2"), [pg("pg1", SINGLE, "cpg1"), pg("pg2", ALL, "cpg1")], [cpg("cpg1", SINGLE)], _on,
            [v("p1_pg1", "node1"), v("p2_pg1", "node2"), v("p1_pg2 p2_pg2", "node1 node2")]),
        f"{_en}: root CompositePodGroup with DisruptionModeAll "
        + ("groups all descendant pods under nested CompositePodGroups with DisruptionModeAll" if _on else
           "with nested CPGs does not group descendant pods"): (
            N2, members("pg1", "pg2", "pg3", "pg4"),
            [pg("pg1", ALL, "cpg2"), pg("pg2", ALL, "cpg2"), pg("pg3", ALL, "cpg3"), pg("pg4", ALL, "cpg3")],
            [cpg("cpg1", ALL), cpg("cpg2", ALL, "cpg1"), cpg("cpg3", ALL, "cpg1")], _on,
            [v("p1_pg1 p2_pg1 p1_pg2 p2_pg2 p1_pg3 p2_pg3 p1_pg4 p2_pg4", "node1 node2")] if _on else
            [v(f"p1_{g} p2_{g}", "node1 node2") for g in ("pg1", "pg2", "pg3", "pg4")]),
        f"{_en}: root CompositePodGroup with DisruptionModeSingle "
        + ("groups descendant pods only under nested CompositePodGroup with DisruptionModeAll" if _on else
           "with nested CPG with DisruptionModeAll does not group descendant pods"): (
            N2, members("pg1", "pg2", "pg3", "pg4"),
            [pg("pg1", ALL, "cpg2"), pg("pg2", ALL, "cpg2"), pg("pg3", SINGLE, "cpg3"), pg("pg4", SINGLE, "cpg3")],
            [cpg("cpg1", SINGLE), cpg("cpg2", ALL, "cpg1"), cpg("cpg3", SINGLE, "cpg1")], _on,
            ([v("p1_pg1 p2_pg1 p1_pg2 p2_pg2", "node1 node2")] if _on else
             [v("p1_pg1 p2_pg1", "node1 node2"), v("p1_pg2 p2_pg2", "node1 node2")])
            + [v("p1_pg3", "node1"), v("p2_pg3", "node2"), v("p1_pg4", "node1"), v("p2_pg4", "node2")]),
        f"{_en}: gang CompositePodGroup with DisruptionModeAll "
        + ("groups pods from different child PodGroups" if _on else
           "does not group pods from different child PodGroups"): (
            N2, members("pg1", "pg2"), [pg("pg1", ALL, "cpg1"), pg("pg2", ALL, "cpg1")], [cpg("cpg1", ALL)], _on,
            [v("p1_pg1 p2_pg1 p1_pg2 p2_pg2", "node1 node2")] if _on else
            [v("p1_pg1 p2_pg1", "node1 node2"), v("p1_pg2 p2_pg2", "node1 node2")]),
        f"{_en}: gang CompositePodGroup with DisruptionModeSingle does not group pods from different child "
        "PodGroups": (
            N2, members("pg1", "pg2"), [pg("pg1", SINGLE, "cpg1"), pg("pg2", SINGLE, "cpg1")], [cpg("cpg1", SINGLE)],
            _on, [v("p1_pg1", "node1"), v("p2_pg1", "node2"), v("p1_pg2", "node1"), v("p2_pg2", "node2")]),
        f"{_en}: root CompositePodGroup with DisruptionModeAll "
        + ("groups all descendants as a single victim even if descendants have DisruptionModeSingle" if _on else
           "does not group descendants, only descendant PodGroup disruption modes are resolved"): (
            N2, members("pg1", "pg2"), [pg("pg1", SINGLE, "cpg1"), pg("pg2", ALL, "cpg1")], [cpg("cpg1", ALL)], _on,
            [v("p1_pg1 p2_pg1 p1_pg2 p2_pg2", "node1 node2")] if _on else
            [v("p1_pg1", "node1"), v("p2_pg1", "node2"), v("p1_pg2 p2_pg2", "node1 node2")]),
    })
DOMAIN_ROWS["CPG enabled: missing parent CompositePodGroup falls back to available ancestor disruption mode"] = (
    N2, members("pg1", "pg2", "pg3", "pg4"),
    [pg("pg1", ALL, "cpg-mid1"), pg("pg2", ALL, "cpg-mid1"), pg("pg3", ALL, "cpg-mid2"), pg("pg4", ALL, "cpg-mid2")],
    [cpg("cpg-root", ALL), cpg("cpg-mid2", ALL, "cpg-root")], True,
    [v("p1_pg1 p2_pg1", "node1 node2"), v("p1_pg2 p2_pg2", "node1 node2"),
     v("p1_pg3 p2_pg3 p1_pg4 p2_pg4", "node1 node2")])


def _got(victims) -> list:
    return [(frozenset(pi.pod.name for pi in dv.pods()), frozenset(dv.affected_nodes()), dv.priority())
            for dv in victims]


def _sorted(vs: list) -> list:
    # upstream sorts both lists by each victim's first pod name
    return sorted(vs, key=lambda x: sorted(x[0])[0] if x[0] else "")


def test_domain_rows_count():
    """6 rows without CompositePodGroups, 15 with (7 enabled/disabled pairs and the missing parent)."""
    assert len(DOMAIN_ROWS) == 21
    assert sum(1 for r in DOMAIN_ROWS.values() if r[3]) == 15


@pytest.mark.parametrize("name", list(DOMAIN_ROWS), ids=list(DOMAIN_ROWS))
def test_new_domain_for_workload_preemption(name):
    nodes, pods, pgs, cpgs, enabled, want = DOMAIN_ROWS[name]
    cache = build(nodes, pods, pgs, cpgs, enabled)
    pg_lister = MockLister({g.name: g for g in pgs})
    cpg_lister = MockLister({c.name: c for c in cpgs}) if enabled else None
    states = cache.composite_groups.states_lister() if enabled else None
    domain = new_domain_for_workload_preemption(cache.snapshot, pg_lister, cache.pod_group_states_lister(),
                                                "test-domain", cpg_lister, states)
    assert domain.name == "test-domain"
    assert set(domain.nodes) == set(nodes)
    assert _sorted(_got(domain.all_possible_victims)) == _sorted(list(want))


# -- TestGetVictimsOnNode's CompositePodGroup rows (mid 100, low 0) ------------------------------------
LOW, MID = 0, 100
GET_VICTIMS_ROWS = {
    "CPG enabled, DisruptionModeAll on root CPG": (
        True, [cpg("cpg1", ALL, priority=MID)], [pg("pg1", SINGLE, "cpg1", LOW), pg("pg2", SINGLE, "cpg1", LOW)],
        [(frozenset({"p1", "p2"}), frozenset(N2), MID, COMPOSITE_POD_GROUP_KEY_TYPE)]),
    "CPG enabled, DisruptionModeSingle on root CPG": (
        True, [cpg("cpg1", SINGLE, priority=MID)], [pg("pg1", SINGLE, "cpg1", LOW), pg("pg2", SINGLE, "cpg1", LOW)],
        [(frozenset({"p1"}), frozenset({"node1"}), MID, POD_GROUP_KEY_TYPE)]),
    "CPG disabled, fallback to PodGroup": (
        False, [cpg("cpg1", ALL, priority=MID)], [pg("pg1", SINGLE, "cpg1", LOW), pg("pg2", SINGLE, "cpg1", LOW)],
        [(frozenset({"p1"}), frozenset({"node1"}), LOW, POD_GROUP_KEY_TYPE)]),
}


def _plugin(cache: Cache, enabled: bool):
    from fastsched.features import FeatureGates
    from fastsched.plugins.defaultpreemption import DefaultPreemption
    gates = FeatureGates({"GenericWorkload": True, "TopologyAwareWorkloadScheduling": enabled,
                          "CompositePodGroup": enabled})
    handle = SimpleNamespace(feature_gates=gates, pod_group_manager=cache, client=None,
                             snapshot_shared_lister=lambda: SimpleNamespace(node_infos=lambda: cache.snapshot),
                             mutable_snapshot=MutableSnapshot(cache))
    return DefaultPreemption(None, handle)


@pytest.fixture
def composite_gate(monkeypatch):
    """The gate is not switchable for users yet: switchable for these tests (upstream's rows set it)."""
    import dataclasses

    from fastsched.features import COMPOSITE_POD_GROUP, KNOWN_GATES
    monkeypatch.setitem(KNOWN_GATES, COMPOSITE_POD_GROUP,
                        dataclasses.replace(KNOWN_GATES[COMPOSITE_POD_GROUP], switchable=True))


@pytest.mark.parametrize("name", list(GET_VICTIMS_ROWS), ids=list(GET_VICTIMS_ROWS))
def test_get_victims_on_node(composite_gate, name):
    """The plugin's ``victims_on_node`` (``GetVictimsOnNode``) on node1, with the plugin's own
    listers (the cache's: upstream's evaluator reads the snapshot's)."""
    enabled, cpgs, pgs, want = GET_VICTIMS_ROWS[name]
    pods = [pod("p1", "node1", "pg1", LOW), pod("p2", "node2", "pg2", LOW)]
    cache = build(N2, pods, pgs, cpgs, enabled)
    pl = _plugin(cache, enabled)
    units = pl.victims_on_node(cache.snapshot.get("node1"), pl._pod_groups())
    got = [(frozenset(pi.pod.name for pi in u.pods()), frozenset(u.affected_nodes()), u.priority(), u.type())
           for u in units]
    assert got == want


# -- priorities over the hierarchy: isOngoingPreemption, PodEligibleToPreemptOthers -------------------
# A pod terminating by preemption on node1, in leaf pg1 (priority 10) under cpg1 (priority 2000): with
# the gate its priority is its root's (2000), above the preemptor's 1000, so no ongoing preemption is
# seen; without it, the leaf's (10): ongoing.
def _terminating_cluster(enabled: bool) -> Cache:
    return build(["node1"], [pod("victim", "node1", "pg1", priority=10, terminating=True)],
                 [pg("pg1", SINGLE, "cpg1", priority=10)], [cpg("cpg1", SINGLE, priority=2000)], enabled)


@pytest.mark.parametrize("enabled,want", [(True, False), (False, True)])
def test_is_ongoing_preemption_over_hierarchy(enabled, want):
    cache = _terminating_cluster(enabled)
    ms = MutableSnapshot(cache)
    ev = PodGroupEvaluator(SimpleNamespace(mutable_snapshot=ms), None, enable_composite_pod_group=enabled)
    cpgs, _ = ev._composite_listers(ms)
    assert (cpgs is not None) == enabled
    member = make_pod("p", priority=1000).replace(uid="p", nominated_node_name="node1")
    preemptor = PodGroupPreemptor(PodGroup(name="preemptor", priority=1000), [member], "PreemptLowerPriority")
    assert ev.is_ongoing_preemption(preemptor, {"node1": cache.snapshot.get("node1")}, ms.pod_groups(), cpgs) is want


@pytest.mark.parametrize("enabled,want", [(True, (True, "")),
                                          (False, (False, "not eligible due to a terminating pod on the nominated "
                                                          "node."))])
def test_pod_eligible_to_preempt_others_over_hierarchy(composite_gate, enabled, want):
    cache = _terminating_cluster(enabled)
    pl = _plugin(cache, enabled)
    preemptor = make_pod("p", priority=1000).replace(uid="p", nominated_node_name="node1")
    assert pl.pod_eligible_to_preempt_others(preemptor, None) == want


def test_evaluator_domain_over_hierarchy(composite_gate):
    """``Preempt``'s domain (``newDomainForWorkloadPreemption`` with the listers the plugin gives
    its evaluator, ``NewPodGroupEvaluator``): with the gate, the tree under a ``disruptionMode:
    all`` root is one victim unit; without, one per leaf. Read where ``select_victims_on_domain``
    receives it (a spy that stops there)."""
    for enabled, want in ((True, 1), (False, 2)):
        cache = build(N2, members("pg1", "pg2"), [pg("pg1", ALL, "cpg1"), pg("pg2", ALL, "cpg1")],
                      [cpg("cpg1", ALL)], enabled)
        pl = _plugin(cache, enabled)
        ms, ev = pl.handle.mutable_snapshot, pl.pod_group_evaluator
        seen: list = []

        def spy(preemptor, domain, pdbs, func, pod_groups=None, seen=seen):
            seen.append(domain)
            return None, Status(Code.UNSCHEDULABLE, "stop")
        ev.select_victims_on_domain = spy
        ms.start_mutations()
        member = make_pod("m", priority=1000).replace(uid="m", scheduling_group=PodSchedulingGroup("pre"))
        ev.evaluate(group_info(PodGroup(name="pre", priority=1000), [member]), lambda: ([], None))
        ms.end_mutations()
        assert len(seen[0].all_possible_victims) == want
        if enabled:
            assert seen[0].all_possible_victims[0].type() == COMPOSITE_POD_GROUP_KEY_TYPE


class _States:
    """A CompositePodGroup states lister whose cpg1 lists a leaf no PodGroup state exists for first."""

    def get(self, namespace: str, name: str):
        from fastsched.framework.podgroups import pod_group_key
        if name != "cpg1":
            raise PodGroupStateError(f"composite pod group state not found for pod group {namespace}/{name}")
        return SimpleNamespace(get_children=lambda: [pod_group_key(namespace, "pg-gone"),
                                                     pod_group_key(namespace, "pg2")])


def test_search_cross_nodes_victim_pods_goes_on_after_a_failed_leaf(caplog):
    """``searchCrossNodesVictimPods`` logs a leaf whose state cannot be read and goes on with the
    others (upstream's ``continue`` over ``helper.GetPodGroupStates``): the unit is pg2's pods."""
    pgs = [pg("pg2", ALL, "cpg1")]
    cache = build(N2, members("pg2"), pgs, [cpg("cpg1", ALL)], True)
    domain = new_domain_for_workload_preemption(cache.snapshot, MockLister({g.name: g for g in pgs}),
                                                cache.pod_group_states_lister(), "d",
                                                MockLister({"cpg1": cpg("cpg1", ALL)}), _States())
    assert _got(domain.all_possible_victims) == [v("p1_pg2 p2_pg2", "node1 node2")]
    assert "Failed to get pod group state during preemption victim collection" in caplog.text


# -- TestGetVictimsOnNode's GenericWorkload rows (high 1000, mid 100, low 0): compared as upstream does,
# a set of (pods, affected nodes, priority) ------------------------------------------------------------
HIGH = 1000
GW_GET_VICTIMS_ROWS = {
    "GenericWorkload disabled, two pods on target node": (
        False, ["node1"], [pod("p1", "node1", priority=MID), pod("p2", "node1", priority=LOW)], [],
        {v("p1", "node1", MID), v("p2", "node1", LOW)}),
    "GenericWorkload enabled, pods with no PodGroup": (
        True, ["node1"], [pod("p1", "node1", priority=MID), pod("p2", "node1", priority=LOW)], [],
        {v("p1", "node1", MID), v("p2", "node1", LOW)}),
    "GenericWorkload enabled, pod belonging to PodGroup with disruptionMode All": (
        True, N2, [pod("p1", "node1", "pg1", MID), pod("p2", "node2", "pg1", MID), pod("p3", "node1", priority=LOW)],
        [pg("pg1", ALL, priority=MID)], {v("p1 p2", "node1 node2", MID), v("p3", "node1", LOW)}),
    "GenericWorkload enabled, pods belonging to PodGroup with disruptionMode Single": (
        True, N2, [pod("p1", "node1", "pg1", LOW), pod("p2", "node2", "pg1", LOW), pod("p3", "node1", "pg1", LOW),
                   pod("p4", "node1", priority=LOW)],
        [pg("pg1", SINGLE, priority=MID)], {v("p1", "node1", MID), v("p3", "node1", MID), v("p4", "node1", LOW)}),
    "GenericWorkload enabled, mixed test with individual pods, PodGroup with DisruptionMode Single, and PodGroup "
    "with DisruptionMode All": (
        True, N2, [pod("p-all-1", "node1", "pg-all", HIGH), pod("p-all-2", "node2", "pg-all", HIGH),
                   pod("p-single-1", "node1", "pg-single", LOW), pod("p-single-2", "node2", "pg-single", LOW),
                   pod("p-ind", "node1", priority=LOW)],
        [pg("pg-all", ALL, priority=HIGH), pg("pg-single", SINGLE, priority=MID)],
        {v("p-all-1 p-all-2", "node1 node2", HIGH), v("p-single-1", "node1", MID), v("p-ind", "node1", LOW)}),
}


@pytest.mark.parametrize("name", list(GW_GET_VICTIMS_ROWS), ids=list(GW_GET_VICTIMS_ROWS))
def test_get_victims_on_node_generic_workload(name):
    """Upstream's ``GetVictimsOnNode`` on node1; without GenericWorkload every pod is its own victim
    with its own priority (``NewPodVictim(podInfo, nil, nil)``)."""
    from fastsched.features import FeatureGates
    from fastsched.plugins.defaultpreemption import DefaultPreemption
    generic_workload, nodes, pods, pgs, want = GW_GET_VICTIMS_ROWS[name]
    cache = Cache(generic_workload=generic_workload)
    for n in nodes:
        cache.add_node(make_node(n))
    for g in pgs:
        cache.add_pod_group(g)
    for p in pods:
        cache.add_pod(p)
    handle = SimpleNamespace(feature_gates=FeatureGates({"GenericWorkload": generic_workload}), pod_group_manager=cache,
                             client=None, mutable_snapshot=MutableSnapshot(cache),
                             snapshot_shared_lister=lambda: SimpleNamespace(node_infos=lambda: cache.snapshot))
    pl = DefaultPreemption(None, handle)
    units = pl.victims_on_node(cache.snapshot.get("node1"), pl._pod_groups())
    got = {(frozenset(pi.pod.name for pi in u.pods()), frozenset(u.affected_nodes()), u.priority()) for u in units}
    assert got == want
