"""The cache's composite pod groups: upstream's ``backend/cache/cache_test.go`` (the CompositePodGroup
rows of ``Test_AddPodGroup`` and ``Test_RemovePodGroup``, ``Test_AddCompositePodGroup``,
``Test_RemoveCompositePodGroup``, ``Test_BuildHierarchySnapshotFromPod``,
``TestCache_GetRootKeyForGroup``), ``podgroupstate_test.go`` (``TestCompositePodGroupState_Children``)
and ``framework/plugins/helper/podgroup_test.go`` (``TestGetPodGroupStates``,
``TestGetPodGroupStates_EarlyBreak``). Children are compared as sets (upstream's are sets)."""
from __future__ import annotations

import pytest

from fastsched.api.compositepodgroup import CompositePodGroup
from fastsched.api.objects import Pod, PodSchedulingGroup
from fastsched.api.scheduling import PodGroup, PodGroupSchedulingPolicy
from fastsched.framework.composite import CompositePodGroupState, composite_pod_group_key, get_pod_group_states
from fastsched.framework.podgroups import PodGroupState, PodGroupStateError, pod_group_key
from fastsched.scheduler.cache import Cache


def pg(name: str, parent: str | None = None, ns: str = "ns1") -> PodGroup:
    return PodGroup(name=name, namespace=ns, uid=f"uid-{name}", parent_composite_pod_group_name=parent,
                    scheduling_policy=PodGroupSchedulingPolicy(basic=True))


def cpg(name: str, parent: str | None = None, ns: str = "ns1") -> CompositePodGroup:
    return CompositePodGroup(name=name, namespace=ns, parent_composite_pod_group_name=parent)


def PG(name: str, ns: str = "ns1"):  # noqa: N802
    return pod_group_key(ns, name)


def CPG(name: str, ns: str = "ns1"):  # noqa: N802
    return composite_pod_group_key(ns, name)


def cache(generic: bool = True, composite: bool = True) -> Cache:
    return Cache(generic_workload=generic, composite_pod_group=composite)


def got_children(c: Cache) -> dict:
    return {k: set(s.children) for k, s in c.composite_groups.states.items() if s.children}


def got_cpgs(c: Cache) -> dict:
    return {k: s.composite_pod_group for k, s in c.composite_groups.states.items()
            if s.composite_pod_group is not None}


def got_pgs(c: Cache) -> dict:
    return {k: s.pod_group for k, s in c.pod_group_states.items() if s.pod_group is not None}


PG1, PG2 = pg("pg1"), pg("pg2")
PG3P, PG4P = pg("pg3", "cpg1"), pg("pg4", "cpg1")
CPG_CHILD = cpg("cpgChild", "cpg1")

# Test_AddPodGroup, the CompositePodGroup rows: (CPG gate, initial CPGs, PodGroups to add, want PGs, want children)
ADD_POD_GROUP = {
    "add single pod group (hierarchical)": (True, [], [PG1], {PG("pg1"): PG1}, {}),
    "add multiple pod groups (hierarchical)": (True, [], [PG1, PG2], {PG("pg1"): PG1, PG("pg2"): PG2}, {}),
    "add pod group with parent": (True, [], [PG3P], {PG("pg3"): PG3P}, {CPG("cpg1"): {PG("pg3")}}),
    "add pod group with parent, parent already in children": (
        True, [], [PG3P, PG4P], {PG("pg3"): PG3P, PG("pg4"): PG4P}, {CPG("cpg1"): {PG("pg3"), PG("pg4")}}),
    "add pod group with parent, parent already has composite pod group child": (
        True, [CPG_CHILD], [PG3P], {PG("pg3"): PG3P}, {CPG("cpg1"): {CPG("cpgChild"), PG("pg3")}}),
    "add pod group with parent when CompositePodGroup disabled": (False, [], [PG3P], {PG("pg3"): PG3P}, {}),
}


@pytest.mark.parametrize("name", list(ADD_POD_GROUP))
def test_add_pod_group(name):
    enabled, cpgs, to_add, want_pgs, want_children = ADD_POD_GROUP[name]
    c = cache(composite=enabled)
    for x in cpgs:
        c.add_composite_pod_group(x)
    for g in to_add:
        c.add_pod_group(g)
    assert got_pgs(c) == want_pgs
    assert got_children(c) == want_children


# Test_RemovePodGroup, the CompositePodGroup rows: (initial CPGs, initial PGs, to delete, want PGs, want children)
REMOVE_POD_GROUP = {
    "delete pod group with parent, parent has other pod group children": (
        [], [PG3P, PG4P], PG3P, {PG("pg4"): PG4P}, {CPG("cpg1"): {PG("pg4")}}),
    "delete pod group with parent, parent has other composite pod group children": (
        [CPG_CHILD], [PG3P], PG3P, {}, {CPG("cpg1"): {CPG("cpgChild")}}),
}


@pytest.mark.parametrize("name", list(REMOVE_POD_GROUP))
def test_remove_pod_group(name):
    cpgs, pgs, to_delete, want_pgs, want_children = REMOVE_POD_GROUP[name]
    c = cache()
    for x in cpgs:
        c.add_composite_pod_group(x)
    for g in pgs:
        c.add_pod_group(g)
    c.remove_pod_group(to_delete)
    with pytest.raises(PodGroupStateError):
        c.pod_groups_lister().get(to_delete.namespace, to_delete.name)
    assert got_pgs(c) == want_pgs
    assert got_children(c) == want_children


def test_remove_last_child_drops_the_placeholder():
    """A parent state made for a child (no object) goes with its last child."""
    c = cache()
    c.add_pod_group(PG3P)
    assert CPG("cpg1") in c.composite_groups.states
    c.remove_pod_group(PG3P)
    assert c.composite_groups.states == {}


CPG1, CPG2 = cpg("cpg1"), cpg("cpg2")
CPG3P, CPG4P = cpg("cpg3", "cpg1"), cpg("cpg4", "cpg1")
PG_CHILD = pg("pgChild", "cpg1")

# Test_AddCompositePodGroup: (initial PGs, CPGs to add, want CPGs, want children)
ADD_COMPOSITE = {
    "add multiple composite pod groups": ([], [CPG1, CPG2], {CPG("cpg1"): CPG1, CPG("cpg2"): CPG2}, {}),
    "add composite pod group with parent, parent already has other composite pod group child": (
        [], [CPG3P, CPG4P], {CPG("cpg3"): CPG3P, CPG("cpg4"): CPG4P}, {CPG("cpg1"): {CPG("cpg3"), CPG("cpg4")}}),
    "add composite pod group with parent, parent already has pod group child": (
        [PG_CHILD], [CPG3P], {CPG("cpg3"): CPG3P}, {CPG("cpg1"): {PG("pgChild"), CPG("cpg3")}}),
}


@pytest.mark.parametrize("name", list(ADD_COMPOSITE))
def test_add_composite_pod_group(name):
    pgs, to_add, want_cpgs, want_children = ADD_COMPOSITE[name]
    c = cache()
    for g in pgs:
        c.add_pod_group(g)
    for x in to_add:
        c.add_composite_pod_group(x)
    assert got_cpgs(c) == want_cpgs
    assert got_children(c) == want_children


CPG_MID = cpg("cpgMid", "cpg1")
PG_LEAF = pg("pgLeaf", "cpgMid")

# Test_RemoveCompositePodGroup: (initial PGs, initial CPGs, to delete, want CPGs, want children)
REMOVE_COMPOSITE = {
    "delete composite pod group with parent, cleans up children map": ([], [CPG3P], CPG3P, {}, {}),
    "delete composite pod group with parent, parent has both other pg and cpg children": (
        [PG_CHILD], [CPG3P, CPG4P], CPG3P, {CPG("cpg4"): CPG4P}, {CPG("cpg1"): {PG("pgChild"), CPG("cpg4")}}),
    "delete mid cpg from root-mid-leaf hierarchy": (
        [PG_LEAF], [CPG1, CPG_MID], CPG_MID, {CPG("cpg1"): CPG1}, {CPG("cpgMid"): {PG("pgLeaf")}}),
}


@pytest.mark.parametrize("name", list(REMOVE_COMPOSITE))
def test_remove_composite_pod_group(name):
    pgs, cpgs, to_delete, want_cpgs, want_children = REMOVE_COMPOSITE[name]
    c = cache()
    for g in pgs:
        c.add_pod_group(g)
    for x in cpgs:
        c.add_composite_pod_group(x)
    c.remove_composite_pod_group(to_delete)
    assert got_cpgs(c) == want_cpgs
    assert got_children(c) == want_children


def test_remove_composite_pod_group_quirks():
    """RemoveCompositePodGroup returns early, leaving its own object, when the parent's state is
    gone (upstream's code); a missing state is a missed add (logged, nothing changes); the gate
    off makes every composite operation a no-op and the listers refuse."""
    c = cache()
    c.add_composite_pod_group(CPG3P)
    del c.composite_groups.states[CPG("cpg1")]
    c.remove_composite_pod_group(CPG3P)
    assert got_cpgs(c) == {CPG("cpg3"): CPG3P}
    c.remove_composite_pod_group(CPG2)
    c.update_composite_pod_group(CPG2, CPG2)
    assert got_cpgs(c) == {CPG("cpg3"): CPG3P}
    off = cache(composite=False)
    off.add_composite_pod_group(CPG1)
    assert off.composite_groups.states == {}
    for lister in (off.composite_groups.states_lister(), off.composite_groups.objects_lister()):
        with pytest.raises(PodGroupStateError, match="composite pod group feature gate is disabled"):
            lister.get("ns1", "cpg1")


def test_composite_listers():
    """CompositePodGroupStates().Get / CompositePodGroups().Get and their errors."""
    c = cache()
    c.add_pod_group(PG3P)  # a placeholder for cpg1: a state without an object
    states, objects = c.composite_groups.states_lister(), c.composite_groups.objects_lister()
    assert states.get("ns1", "cpg1").get_children() == [PG("pg3")]
    with pytest.raises(PodGroupStateError, match="^composite pod group object not found for composite pod group "
                                                 "compositepodgroup/ns1/cpg1$"):
        objects.get("ns1", "cpg1")
    with pytest.raises(PodGroupStateError, match="^composite pod group state not found for composite pod group "
                                                 "compositepodgroup/ns1/nope$"):
        states.get("ns1", "nope")
    c.add_composite_pod_group(CPG1)
    assert objects.get("ns1", "cpg1") is CPG1


def test_composite_pod_group_state_children():
    """TestCompositePodGroupState_Children."""
    state = CompositePodGroupState()
    assert state.get_children() == []
    state.add_child(PG("child1"))
    state.add_child(CPG("child2"))
    assert sorted(str(k) for k in state.get_children()) == ["compositepodgroup/ns1/child2", "podgroup/ns1/child1"]
    before = state.generation
    state.remove_child(PG("child1"))
    assert state.generation > before and state.get_children() == [CPG("child2")]


def _pod(name: str, group: str | None) -> Pod:
    return Pod(name=name, namespace="ns1", uid=name,
               scheduling_group=None if group is None else PodSchedulingGroup(group))


# Test_BuildHierarchySnapshotFromPod: (pod, PGs, CPGs, CPG gate, want error, want PG keys, want CPG keys)
HIERARCHY = {
    "pod without scheduling group": (_pod("p0", None), [], [], False, True, [], []),
    "pod with scheduling group but no pod group in cache": (_pod("p1", "pg1"), [], [], False, True, [], []),
    "simple pod group": (_pod("p1", "pg1"), [pg("pg1")], [], False, False, [PG("pg1")], []),
    "pod group with parent CPG": (_pod("p2", "pg2"), [pg("pg2", "cpg1")], [cpg("cpg1")], True, False,
                                  [PG("pg2")], [CPG("cpg1")]),
    "pod group with parent CPG hierarchy": (_pod("p3", "pg3"), [pg("pg3", "cpg2")],
                                            [cpg("cpg2", "cpg3"), cpg("cpg3")], True, False,
                                            [PG("pg3")], [CPG("cpg2"), CPG("cpg3")]),
    "cycle detection in hierarchy": (_pod("pCycle", "pgCycle"), [pg("pgCycle", "cycle1")],
                                     [cpg("cycle1", "cycle2"), cpg("cycle2", "cycle1")], True, True, [], []),
    "pod group with parent CPG but feature disabled": (_pod("p2", "pg2"), [pg("pg2", "cpg1")], [cpg("cpg1")], False,
                                                       False, [PG("pg2")], []),
}


@pytest.mark.parametrize("name", list(HIERARCHY))
def test_hierarchy_snapshot_for_pod(name):
    pod, pgs, cpgs, enabled, want_err, want_pgs, want_cpgs = HIERARCHY[name]
    c = cache(composite=enabled)
    for g in pgs:
        c.add_pod_group(g)
    for x in cpgs:
        c.add_composite_pod_group(x)
    if want_err:
        with pytest.raises(PodGroupStateError):
            c.composite_groups.hierarchy_snapshot_for_pod(pod)
        return
    snap = c.composite_groups.hierarchy_snapshot_for_pod(pod)
    assert set(snap.pod_group_states) == set(want_pgs)
    assert set(snap.composite_pod_group_states) == set(want_cpgs)
    for key, copy in snap.composite_pod_group_states.items():  # copies, not the cache's own
        assert copy is not c.composite_groups.states[key] and copy.children == c.composite_groups.states[key].children


def _root_key_cache(composite: bool) -> Cache:
    """TestCache_GetRootKeyForGroup's setupCacheForRootKeyTest: states set directly."""
    c = cache(composite=composite)
    def pg_state(g):
        s = PodGroupState()
        s.pod_group = g
        c.pod_group_states[PG(g.name)] = s
    def cpg_state(x):
        s = CompositePodGroupState()
        s.composite_pod_group = x
        c.composite_groups.states[CPG(x.name)] = s
    pg_state(pg("pg1", "cpg1"))
    cpg_state(cpg("cpg1", "cpg2"))
    cpg_state(cpg("cpg2"))
    pg_state(pg("pg_cycle", "cpg_cycle_1"))
    cpg_state(cpg("cpg_cycle_1", "cpg_cycle_2"))
    cpg_state(cpg("cpg_cycle_2", "cpg_cycle_1"))
    pg_state(pg("pg_missing_parent", "non-existent"))
    return c


# TestCache_GetRootKeyForGroup: (CPG gate, key, want root, want ok, want error)
ROOT_KEY = {
    "from pg to root (GW=true, CPG=true)": (True, PG("pg1"), CPG("cpg2"), True, False),
    "from cpg to root (GW=true, CPG=true)": (True, CPG("cpg1"), CPG("cpg2"), True, False),
    "from root (GW=true, CPG=true)": (True, CPG("cpg2"), CPG("cpg2"), True, False),
    "from pg (with parent set), compositePodGroup disabled": (False, PG("pg1"), PG("pg1"), True, False),
    "missing intermediate": (True, PG("pg_missing_parent"), None, False, False),
    "cycle detected": (True, PG("pg_cycle"), None, False, True),
}


@pytest.mark.parametrize("name", list(ROOT_KEY))
def test_root_key_for_group(name):
    enabled, key, want, want_ok, want_err = ROOT_KEY[name]
    c = _root_key_cache(enabled)
    if want_err:
        with pytest.raises(PodGroupStateError, match="cycle detected in the hierarchy"):
            c.composite_groups.root_key_for_group(key)
        return
    got, ok = c.composite_groups.root_key_for_group(key)
    assert ok == want_ok
    if ok:
        assert got == want


class _Faulty:
    """helper/podgroup_test.go's fakeSharedLister: these CompositePodGroup keys fail to look up."""

    def __init__(self, inner, faulty):
        self.inner, self.faulty = inner, set(faulty)

    def get(self, namespace, name):
        if composite_pod_group_key(namespace, name) in self.faulty:
            raise PodGroupStateError(f"fake error for {namespace}/{name}")
        return self.inner.get(namespace, name)


# TestGetPodGroupStates: (PGs, CPGs, root, faulty keys, want error count); leaves as pod group names
GET_POD_GROUP_STATES = {
    "root is PodGroup": ([pg("pg1", ns="test")], [], PG("pg1", "test"), [], 0),
    "root is CompositePodGroup": ([pg("pg1", "cpg-root", "test"), pg("pg2", "cpg-root", "test")],
                                  [cpg("cpg-root", ns="test")], CPG("cpg-root", "test"), [], 0),
    "root is CompositePodGroup and has no leaves": ([], [cpg("cpg-root", ns="test")], CPG("cpg-root", "test"), [], 0),
    "root is CompositePodGroup and one entity key is missing": (
        [pg("pg-leaf", "cpg-mid2", "test")],
        [cpg("cpg-root", ns="test"), cpg("cpg-mid1", "cpg-root", "test"), cpg("cpg-mid2", "cpg-root", "test")],
        CPG("cpg-root", "test"), [CPG("cpg-mid1", "test")], 1),
    "root is CompositePodGroup and multiple entity keys are missing": (
        [], [cpg("cpg-root", ns="test"), cpg("cpg-mid1", "cpg-root", "test"), cpg("cpg-mid2", "cpg-root", "test")],
        CPG("cpg-root", "test"), [CPG("cpg-mid1", "test"), CPG("cpg-mid2", "test")], 2),
    "there's no root matching the entity key": ([], [], PG("non-existent", "test"), [], 1),
    "cpg tree exceeds the max depth": (
        [pg("pg-root", "cpg-root", "test"), pg("pg1", "cpg1", "test"), pg("pg2.1", "cpg2.1", "test"),
         pg("pg2.2", "cpg2.2", "test")],
        [cpg("cpg-root", ns="test"), cpg("cpg1", "cpg-root", "test"), cpg("cpg2.1", "cpg1", "test"),
         cpg("cpg3", "cpg2.1", "test"), cpg("cpg4", "cpg3", "test"), cpg("cpg2.2", "cpg1", "test")],
        CPG("cpg-root", "test"), [], 1),
}


def _test_cache(pgs, cpgs) -> Cache:
    """NewTestSnapshotWithCompositePodGroups: each PodGroup with one member named after it."""
    c = cache()
    for x in cpgs:
        c.add_composite_pod_group(x)
    for g in pgs:
        c.add_pod_group(g)
        c.add_pod_group_member(Pod(name=g.name, namespace=g.namespace, uid=g.name,
                                   scheduling_group=PodSchedulingGroup(g.name)))
    return c


@pytest.mark.parametrize("name", list(GET_POD_GROUP_STATES))
def test_get_pod_group_states(name):
    pgs, cpgs, root, faulty, want_errors = GET_POD_GROUP_STATES[name]
    c = _test_cache(pgs, cpgs)
    got, errors = set(), []
    for state, err in get_pod_group_states(c.pod_group_states_lister(),
                                           _Faulty(c.composite_groups.states_lister(), faulty), root):
        if err is not None:
            errors.append(err)
        else:
            (uid,) = state.all_pods
            got.add(uid)
    assert got == {g.name for g in pgs}
    assert len(errors) == want_errors
    if name == "cpg tree exceeds the max depth":
        assert str(errors[0]) == "exceeded maximum hierarchy depth at compositepodgroup/test/cpg4"


def test_get_pod_group_states_early_break():
    """TestGetPodGroupStates_EarlyBreak: the walk is lazy."""
    c = _test_cache([pg(f"pg{i}", "cpg-root", "test") for i in (1, 2, 3)], [cpg("cpg-root", ns="test")])
    walk = get_pod_group_states(c.pod_group_states_lister(), c.composite_groups.states_lister(),
                                CPG("cpg-root", "test"))
    first = next(walk)
    assert first[1] is None
    walk.close()
