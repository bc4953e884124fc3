"""The queue's forest of pod groups with CompositePodGroup: upstream's
``pkg/scheduler/backend/queue/workload_forest_test.go``, every table transcribed (the sets of
children compared as sets; leaves as sets, as upstream compares them by UID)."""
from __future__ import annotations

import pytest

from fastsched.api.compositepodgroup import CompositePodGroup
from fastsched.api.objects import Pod, PodSchedulingGroup
from fastsched.api.scheduling import CompositeGangSchedulingPolicy, CompositePodGroupSchedulingPolicy, \
    GangSchedulingPolicy, PodGroup, PodGroupSchedulingPolicy
from fastsched.framework.composite import COMPOSITE_POD_GROUP_KEY_TYPE, PodGroupInfo, composite_pod_group_key
from fastsched.framework.podgroups import POD_GROUP_KEY_TYPE, pod_group_key
from fastsched.scheduler.backend.queue.workload_forest import CompositeWorkloadForest


def pg(name: str, parent: str | None = None, min_count: int | None = None, uid: str | None = None) -> PodGroup:
    policy = PodGroupSchedulingPolicy(gang=GangSchedulingPolicy(min_count)) if min_count else \
        PodGroupSchedulingPolicy(basic=True)
    return PodGroup(name=name, namespace="ns1", uid=uid or f"uid-{name}", parent_composite_pod_group_name=parent,
                    scheduling_policy=policy)


def cpg(name: str, parent: str | None = None, min_group_count: int | None = None) -> CompositePodGroup:
    policy = CompositePodGroupSchedulingPolicy(gang=CompositeGangSchedulingPolicy(min_group_count)) \
        if min_group_count else CompositePodGroupSchedulingPolicy(basic=True)
    return CompositePodGroup(name=name, namespace="ns1", parent_composite_pod_group_name=parent,
                             scheduling_policy=policy)


def PG(name: str):  # noqa: N802 - fwk.PodGroupKey
    return pod_group_key("ns1", name)


def CPG(name: str):  # noqa: N802 - fwk.CompositePodGroupKey
    return composite_pod_group_key("ns1", name)


def forest(enabled: bool = True, pgs=(), cpgs=(), cpgs_first: bool = False) -> CompositeWorkloadForest:
    wf = CompositeWorkloadForest(enabled)
    if cpgs_first:
        for c in cpgs:
            wf.add_composite_pod_group(c)
    for g in pgs:
        wf.add_pod_group(g)
    if not cpgs_first:
        for c in cpgs:
            wf.add_composite_pod_group(c)
    return wf


def children(wf: CompositeWorkloadForest) -> dict:
    return {parent: set(kids) for parent, kids in wf.children.items()}


PG1, PG2 = pg("pg1"), pg("pg2")
PG3P, PG4P = pg("pg3", "cpg1"), pg("pg4", "cpg1")
CPG_CHILD = cpg("cpgChild", "cpg1")

# TestWorkloadForest_AddPodGroup: (enabled, initial CPGs, PodGroups to add, want pod groups, want children)
ADD_POD_GROUP = {
    "add single pod group": (True, [], [PG1], {PG("pg1"): PG1}, {}),
    "add multiple pod groups": (True, [], [PG1, PG2], {PG("pg1"): PG1, PG("pg2"): PG2}, {}),
    "add pod group with parent, parent not in children": (
        True, [], [PG3P], {PG("pg3"): PG3P}, {CPG("cpg1"): {PG("pg3")}}),
    "add pod group with parent, parent already in children": (
        True, [], [PG3P, PG4P], {PG("pg3"): PG3P, PG("pg4"): PG4P}, {CPG("cpg1"): {PG("pg3"), PG("pg4")}}),
    "add pod group with parent, parent already has composite pod group child": (
        True, [CPG_CHILD], [PG3P], {PG("pg3"): PG3P}, {CPG("cpg1"): {CPG("cpgChild"), PG("pg3")}}),
    "add pod group with parent, feature disabled": (False, [], [PG3P], {PG("pg3"): PG3P}, {}),
    "add same pod group again, feature enabled": (True, [], [PG1, PG1], {PG("pg1"): PG1}, {}),
    "add same pod group again, feature disabled": (False, [], [PG1, PG1], {PG("pg1"): PG1}, {}),
    "add same pod group with parent again, feature enabled": (
        True, [], [PG3P, PG3P], {PG("pg3"): PG3P}, {CPG("cpg1"): {PG("pg3")}}),
    "add same pod group with parent again, feature disabled": (False, [], [PG3P, PG3P], {PG("pg3"): PG3P}, {}),
}


@pytest.mark.parametrize("name", list(ADD_POD_GROUP))
def test_add_pod_group(name):
    enabled, cpgs, to_add, want_pgs, want_children = ADD_POD_GROUP[name]
    wf = forest(enabled, to_add, cpgs, cpgs_first=True)
    assert wf.pod_groups == want_pgs
    assert children(wf) == want_children


def test_update_pod_group():
    """TestWorkloadForest_UpdatePodGroup."""
    pg1, updated = pg("pg1", min_count=1), pg("pg1", min_count=2)
    wf = forest(True, [pg1])
    wf.update_pod_group(updated)
    assert wf.pod_groups == {PG("pg1"): updated}
    wf = forest(True, [pg1])
    wf.update_pod_group(PG2)  # "update non-existent pod group adds it"
    assert wf.pod_groups == {PG("pg1"): pg1, PG("pg2"): PG2}


# TestWorkloadForest_DeletePodGroup: (enabled, initial PGs, initial CPGs, to delete, want PGs, want children)
DELETE_POD_GROUP = {
    "delete existing pod group": (True, [PG1, PG2], [], PG1, {PG("pg2"): PG2}, {}),
    "delete non-existent pod group is no-op": (True, [PG1], [], PG2, {PG("pg1"): PG1}, {}),
    "delete pod group with parent, where parent CPG does not exist in compositePodGroups (e.g. was just deleted)": (
        True, [PG3P], [], PG3P, {}, {}),
    "delete pod group with parent, where parent CPG exists in compositePodGroups": (
        True, [PG3P], [cpg("cpg1")], PG3P, {}, {}),
    "delete pod group with parent, parent has other pod group children": (
        True, [PG3P, PG4P], [], PG3P, {PG("pg4"): PG4P}, {CPG("cpg1"): {PG("pg4")}}),
    "delete pod group with parent, parent has other composite pod group children": (
        True, [PG3P], [CPG_CHILD], PG3P, {}, {CPG("cpg1"): {CPG("cpgChild")}}),
    "delete pod group with parent, feature disabled": (False, [PG3P], [], PG3P, {}, {}),
}


@pytest.mark.parametrize("name", list(DELETE_POD_GROUP))
def test_delete_pod_group(name):
    enabled, pgs, cpgs, to_delete, want_pgs, want_children = DELETE_POD_GROUP[name]
    wf = forest(enabled, pgs, cpgs)
    wf.delete_pod_group(to_delete)
    assert wf.pod_groups == want_pgs
    assert children(wf) == want_children


@pytest.mark.parametrize("enabled", [True, False])
def test_get_pod_group(enabled):
    """TestWorkloadForest_GetPodGroup (both gate values)."""
    wf = forest(enabled, [PG1])
    assert wf.get_pod_group(PG1) is PG1
    assert wf.get_pod_group(PG2) is None


def test_get_composite_pod_group():
    """TestWorkloadForest_GetCompositePodGroup."""
    cpg1, cpg2 = cpg("cpg1"), cpg("cpg2")
    wf = forest(True, cpgs=[cpg1])
    assert wf.get_composite_pod_group(cpg1) is cpg1
    assert wf.get_composite_pod_group(cpg2) is None


CPG1, CPG2 = cpg("cpg1"), cpg("cpg2")
CPG3P, CPG4P = cpg("cpg3", "cpg1"), cpg("cpg4", "cpg1")
PG_CHILD = pg("pgChild", "cpg1")

# TestWorkloadForest_AddCompositePodGroup: (initial PGs, CPGs to add, want CPGs, want children)
ADD_COMPOSITE = {
    "add single composite pod group": ([], [CPG1], {CPG("cpg1"): CPG1}, {}),
    "add multiple composite pod groups": ([], [CPG1, CPG2], {CPG("cpg1"): CPG1, CPG("cpg2"): CPG2}, {}),
    "add composite pod group with parent, parent not in children": (
        [], [CPG3P], {CPG("cpg3"): CPG3P}, {CPG("cpg1"): {CPG("cpg3")}}),
    "add composite pod group with parent, parent already has other composite pod group child": (
        [], [CPG3P, CPG4P], {CPG("cpg3"): CPG3P, CPG("cpg4"): CPG4P}, {CPG("cpg1"): {CPG("cpg3"), CPG("cpg4")}}),
    "add composite pod group with parent, parent already has pod group child": (
        [PG_CHILD], [CPG3P], {CPG("cpg3"): CPG3P}, {CPG("cpg1"): {PG("pgChild"), CPG("cpg3")}}),
    "add same composite pod group again": ([], [CPG1, CPG1], {CPG("cpg1"): CPG1}, {}),
    "add same composite pod group with parent again": (
        [], [CPG3P, CPG3P], {CPG("cpg3"): CPG3P}, {CPG("cpg1"): {CPG("cpg3")}}),
}


@pytest.mark.parametrize("name", list(ADD_COMPOSITE))
def test_add_composite_pod_group(name):
    pgs, to_add, want_cpgs, want_children = ADD_COMPOSITE[name]
    wf = forest(True, pgs, to_add)
    assert wf.composite_pod_groups == want_cpgs
    assert children(wf) == want_children


def test_update_composite_pod_group():
    """TestWorkloadForest_UpdateCompositePodGroup."""
    cpg1, updated = cpg("cpg1", min_group_count=1), cpg("cpg1", min_group_count=2)
    wf = forest(True, cpgs=[cpg1])
    wf.update_composite_pod_group(updated)
    assert wf.composite_pod_groups == {CPG("cpg1"): updated}
    wf = forest(True, cpgs=[cpg1])
    wf.update_composite_pod_group(CPG2)
    assert wf.composite_pod_groups == {CPG("cpg1"): cpg1, CPG("cpg2"): CPG2}


CPG_MID = cpg("cpgMid", "cpg1")
PG_LEAF = pg("pgLeaf", "cpgMid")

# TestWorkloadForest_DeleteCompositePodGroup: (initial PGs, initial CPGs, to delete, want CPGs, want children)
DELETE_COMPOSITE = {
    "delete existing composite pod group without parent": ([], [CPG1], CPG1, {}, {}),
    "delete composite pod group with parent, cleans up children map": ([], [CPG3P], CPG3P, {}, {}),
    "delete composite pod group with parent, parent has other pod group child": (
        [PG_CHILD], [CPG3P], CPG3P, {}, {CPG("cpg1"): {PG("pgChild")}}),
    "delete composite pod group with parent, parent has other composite pod group child": (
        [], [CPG3P, CPG4P], CPG3P, {CPG("cpg4"): CPG4P}, {CPG("cpg1"): {CPG("cpg4")}}),
    "delete composite pod group with parent, parent has both other pg and cpg children": (
        [PG_CHILD], [CPG3P, CPG4P], CPG3P, {CPG("cpg4"): CPG4P}, {CPG("cpg1"): {PG("pgChild"), CPG("cpg4")}}),
    "delete mid cpg from root-mid-leaf hierarchy": (
        [PG_LEAF], [CPG1, CPG_MID], CPG_MID, {CPG("cpg1"): CPG1}, {CPG("cpgMid"): {PG("pgLeaf")}}),
    "delete non-existent composite pod group": ([], [CPG3P], CPG1, {CPG("cpg3"): CPG3P}, {CPG("cpg1"): {CPG("cpg3")}}),
}


@pytest.mark.parametrize("name", list(DELETE_COMPOSITE))
def test_delete_composite_pod_group(name):
    pgs, cpgs, to_delete, want_cpgs, want_children = DELETE_COMPOSITE[name]
    wf = forest(True, pgs, cpgs)
    wf.delete_composite_pod_group(to_delete)
    assert wf.composite_pod_groups == want_cpgs
    assert children(wf) == want_children


def _pod(name: str, group: str) -> Pod:
    return Pod(name=name, namespace="ns1", scheduling_group=PodSchedulingGroup(group))


PG2P = pg("pg2", "cpg1")

# TestWorkloadForest_GetRootLookupInfoForPod: (enabled, initial PGs, initial CPGs, pod, want root)
ROOT_FOR_POD = {
    "pod belongs to existing standalone pod group": (True, [PG1], [], _pod("pod1", "pg1"), PG("pg1")),
    "pod belongs to pod group with parent cpg": (True, [PG2P], [CPG1], _pod("pod2", "pg2"), CPG("cpg1")),
    "pod belongs to non-existent pod group": (True, [PG1], [], _pod("pod3", "pg3"), None),
    "pod belongs to existing standalone pod group (CPG=false)": (False, [PG1], [], _pod("pod1", "pg1"), PG("pg1")),
    "pod belongs to pod group with parent cpg (CPG=false)": (False, [PG2P], [CPG1], _pod("pod2", "pg2"), PG("pg2")),
    "pod belongs to non-existent pod group (CPG=false)": (False, [PG1], [], _pod("pod3", "pg3"), None),
}


@pytest.mark.parametrize("name", list(ROOT_FOR_POD))
def test_root_for_pod(name):
    enabled, pgs, cpgs, pod, want = ROOT_FOR_POD[name]
    assert forest(enabled, pgs, cpgs).root_for_pod(pod) == want


PG3_MISSING_PARENT = pg("pg3", "cpg-missing")

# TestWorkloadForest_GetRootLookupInfoForPodGroup: (enabled, initial PGs, initial CPGs, pod group, want root)
ROOT_FOR_POD_GROUP = {
    "standalone pod group": (True, [PG1], [], PG1, PG("pg1")),
    "pod group with existing parent cpg": (True, [PG2P], [CPG1], PG2P, CPG("cpg1")),
    "pod group with non-existent parent cpg": (True, [PG3_MISSING_PARENT], [], PG3_MISSING_PARENT, None),
    "non-existent pod group": (True, [], [], PG1, None),
    "standalone pod group (CPG=false)": (False, [PG1], [], PG1, PG("pg1")),
    "pod group with existing parent cpg (CPG=false)": (False, [PG2P], [CPG1], PG2P, PG("pg2")),
    "pod group with non-existent parent cpg (CPG=false)": (False, [PG3_MISSING_PARENT], [], PG3_MISSING_PARENT,
                                                           PG("pg3")),
    "non-existent pod group (CPG=false)": (False, [], [], PG1, None),
}


@pytest.mark.parametrize("name", list(ROOT_FOR_POD_GROUP))
def test_root_for_pod_group(name):
    enabled, pgs, cpgs, pod_group, want = ROOT_FOR_POD_GROUP[name]
    assert forest(enabled, pgs, cpgs).root_for_pod_group(pod_group) == want


CPG2P = cpg("cpg2", "cpg1")
CPG3_CYCLE, CPG4_CYCLE = cpg("cpg3", "cpg4"), cpg("cpg4", "cpg3")

# TestWorkloadForest_GetRootLookupInfoForCPG: (initial CPGs, cpg, want root)
ROOT_FOR_COMPOSITE = {
    "standalone cpg": ([CPG1], CPG1, CPG("cpg1")),
    "cpg with parent": ([CPG1, CPG2P], CPG2P, CPG("cpg1")),
    "cpg with parent missing": ([CPG2P], CPG2P, None),
    "cpg cycle detection": ([CPG3_CYCLE, CPG4_CYCLE], CPG3_CYCLE, None),
}


@pytest.mark.parametrize("name", list(ROOT_FOR_COMPOSITE))
def test_root_for_composite_pod_group(name, caplog):
    cpgs, target, want = ROOT_FOR_COMPOSITE[name]
    assert forest(True, cpgs=cpgs).root_for_composite_pod_group(target) == want
    if name == "cpg cycle detection":
        assert "cycle detected in composite pod group hierarchy" in caplog.text


PG3_UNDER_CPG2 = pg("pg3", "cpg2")

# TestWorkloadForest_GetLeafPodGroups: (enabled, initial PGs, initial CPGs, root, want leaves)
LEAF_POD_GROUPS = {
    "single pod group lookup": (True, [PG1], [], PG("pg1"), [PG1]),
    "cpg with direct pod group child": (True, [PG2P], [CPG1], CPG("cpg1"), [PG2P]),
    "cpg with nested pod group child": (True, [PG2P, PG3_UNDER_CPG2], [CPG1, CPG2P], CPG("cpg1"),
                                        [PG2P, PG3_UNDER_CPG2]),
    "missing root": (True, [], [], CPG("missing"), []),
    "single pod group lookup (CPG=false)": (False, [PG1], [], PG("pg1"), [PG1]),
    "pg with direct pod group child lookup (CPG=false)": (False, [PG2P], [CPG1], PG("pg2"), [PG2P]),
    "missing root (CPG=false)": (False, [], [], CPG("missing"), []),
}


@pytest.mark.parametrize("name", list(LEAF_POD_GROUPS))
def test_leaf_pod_groups(name):
    enabled, pgs, cpgs, root, want = LEAF_POD_GROUPS[name]
    got = forest(enabled, pgs, cpgs).leaf_pod_groups(root)
    assert {g.uid: g for g in got} == {g.uid: g for g in want}
    assert len(got) == len(want)


@pytest.mark.parametrize("enabled", [True, False])
def test_build_pod_group_info_for_pod_group(enabled):
    """TestWorkloadForest_BuildPodGroupInfoForPG."""
    wf = forest(enabled, [PG1])
    got = wf.build_pod_group_info_for_pod_group(PG1, set())
    assert got == PodGroupInfo("ns1", "pg1", POD_GROUP_KEY_TYPE, pod_group=PG1)
    assert got.children == []


@pytest.mark.parametrize("enabled", [True, False])
def test_build_pod_group_info_for_composite(enabled):
    """TestWorkloadForest_BuildPodGroupInfoForCPG: with the gate, the child PodGroup is in the
    tree; without it, its parent is ignored and the CompositePodGroup has no children."""
    pg1 = pg("pg1", "cpg1", min_count=2)
    cpg1 = cpg("cpg1", min_group_count=1)
    wf = forest(enabled, [pg1], [cpg1])
    got = wf.build_pod_group_info_for_composite(cpg1, set())
    want_children = [PodGroupInfo("ns1", "pg1", POD_GROUP_KEY_TYPE, pod_group=pg1)] if enabled else []
    assert got == PodGroupInfo("ns1", "cpg1", COMPOSITE_POD_GROUP_KEY_TYPE, composite_pod_group=cpg1,
                               children=want_children)


def test_build_pod_group_info_tree_and_cycles(caplog):
    """buildQueuedPodGroupInfo's tree: a root's whole observed hierarchy, leaves at any depth; an
    unobserved root gives None; a cycle is cut (and logged) where it closes."""
    wf = forest(True, [PG2P, PG3_UNDER_CPG2], [CPG1, CPG2P])
    tree = wf.build_pod_group_info(CPG("cpg1"))
    assert tree is not None and tree.key == CPG("cpg1")
    assert [leaf.name for leaf in tree.leaves()] == ["pg2", "pg3"]
    assert [child.key for child in tree.children] == [PG("pg2"), CPG("cpg2")]
    assert wf.build_pod_group_info(CPG("missing")) is None
    assert wf.build_pod_group_info(PG("pg2")).pod_group is PG2P
    looped = forest(True, [], [CPG3_CYCLE, CPG4_CYCLE])
    tree = looped.build_pod_group_info(CPG("cpg3"))
    assert [c.key for c in tree.children] == [CPG("cpg4")] and tree.children[0].children == []
    assert "cycle detected in composite pod group hierarchy" in caplog.text
    assert looped.leaf_pod_groups(CPG("cpg3")) == []
