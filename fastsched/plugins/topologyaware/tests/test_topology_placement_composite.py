"""TopologyPlacementGenerator and PodGroupPodsCount over a CompositePodGroup entity: the ``for cpg``
rows of upstream's ``topology_placement_test.go`` ``TestGeneratePlacements`` and of
``podgroup_pods_count_test.go`` ``TestScorePlacement`` (v1.37.2), and their PodGroup rows again
with the gate on (``cpg=true``). Scheduled pods hang below the composite root through the rows'
``pathToRoot`` (a PodGroup under a CompositePodGroup under the root)."""
from __future__ import annotations

import pytest

from fastsched import Scheduler
from fastsched.api.compositepodgroup import CompositePodGroup
from fastsched.api.objects import PodSchedulingGroup
from fastsched.api.scheduling import PodGroup, PodGroupSchedulingConstraints, TopologyConstraint
from fastsched.features import FeatureGates
from fastsched.framework import Code, Placement, PodGroupAssignments, ProposedAssignment
from fastsched.framework.composite import COMPOSITE_POD_GROUP_KEY_TYPE, PodGroupInfo, composite_pod_group_key
from fastsched.framework.podgroups import QueuedPodGroupInfo, pod_group_key
from fastsched.plugins.podgrouppodscount import PodGroupPodsCount
from fastsched.plugins.topologyaware import TopologyPlacement
from fastsched.plugins.topologyaware.tests.test_topology_placement import GENERATE, INITIAL, node
from fastsched.testing import make_node, make_pod


def _constraints(key):
    return None if key is None else PodGroupSchedulingConstraints((TopologyConstraint(key),))


def _scheduler(nodes) -> Scheduler:
    s = Scheduler(None, feature_gates=FeatureGates({"GenericWorkload": True, "TopologyAwareWorkloadScheduling": True}))
    s.add_nodes([make_node(n, labels=labels) for n, labels in nodes])
    s.cache.composite_groups.enabled = True  # the gate, for the cache's part (not switchable yet)
    return s


def _hang(s: Scheduler, root: str, path: list[str], pod_name: str, node_name: str, assumed: bool) -> None:
    """A member of ``path[0]`` (a PodGroup) under ``path[1:]`` (CompositePodGroups) under ``root``
    (upstream's loop over slices.Backward(pathToRoot))."""
    parent = root
    for depth, entity in reversed(list(enumerate(path))):
        if depth == 0:
            if s.cache.pod_group_states.get(pod_group_key("default", entity)) is None:
                s.cache.add_pod_group(PodGroup(name=entity, namespace="default", parent_composite_pod_group_name=parent))
        elif getattr(s.cache.composite_groups.states.get(composite_pod_group_key("default", entity)),
                     "composite_pod_group", None) is None:
            s.cache.add_composite_pod_group(CompositePodGroup(name=entity, namespace="default",
                                                              parent_composite_pod_group_name=parent))
        parent = entity
    pod = make_pod(pod_name).replace(uid=pod_name, scheduling_group=PodSchedulingGroup(parent))
    if assumed:
        s.cache.add_pod_group_member(pod)
        s.cache.assume_pod(pod.with_node_name(node_name))
    else:
        s.cache.add_pod(pod.with_node_name(node_name))


def _root(s: Scheduler, key) -> PodGroupInfo:
    root = CompositePodGroup(name="root", namespace="default", scheduling_constraints=_constraints(key))
    s.cache.add_composite_pod_group(root)
    return PodGroupInfo("default", "root", COMPOSITE_POD_GROUP_KEY_TYPE, composite_pod_group=root)


# TestGeneratePlacements, the "for cpg" rows: (key, scheduled pods (path, node), placement nodes, other nodes, want)
PATH1, PATH2 = ["pg1", "cpg1"], ["pg2", "cpg2"]
GENERATE_CPG = {
    "for cpg with topology key constraint, returns placement for each topology domain": (
        "topology1", [], GENERATE["with topology key constraint, returns placement for each topology domain"][2], [],
        {"d1": ["node2", "node4"], "d2": ["node3"], "d3": ["node5"]}),
    "for cpg without matching topology label, returns empty": (
        "topology3", [], GENERATE["without matching topology label, returns empty"][2], [], {}),
    "for cpg with pods already scheduled in a single domain, returns that domain": (
        "topology", [(PATH1, "node2"), (PATH2, "node3")], [node("node0", topology="d2"), node("node1", topology="d1")],
        [node("node2", topology="d1"), node("node3", topology="d1")], {"d1": ["node1"]}),
    "for cpg with pods already scheduled in a single domain not present in current placement, returns empty": (
        "topology", [(PATH1, "node2"), (PATH2, "node3")], [node("node0", topology="d2")],
        [node("node2", topology="d1"), node("node3", topology="d1")], {}),
    "for cpg with pods already scheduled in conflicting domains across separate pod groups, returns error": (
        "topology", [(PATH1, "node2"), (PATH2, "node3")], [node("node0", topology="d2"), node("node1", topology="d1")],
        [node("node2", topology="d0"), node("node3", topology="d1")], None),
    "for cpg with pods already scheduled in conflicting domains in a single pod group, returns error": (
        "topology", [(PATH1, "node2"), (PATH1, "node3")], [node("node0", topology="d2"), node("node1", topology="d1")],
        [node("node2", topology="d0"), node("node3", topology="d1")], None),
    "for cpg with already scheduled pod on node outside of snapshot, returns error": (
        "topology", [(PATH1, "node2"), (PATH1, "node4")], [node("node0", topology="d2"), node("node1", topology="d1")],
        [node("node2", topology="d1"), node("node3", topology="d1")], None),
    "for cpg with already scheduled pod on node without topology label, returns error": (
        "topology", [(PATH1, "node2")], [node("node1", topology="d2")], [node("node2", foo="bar")], None),
}


def _generate(s: Scheduler, entity, placement_nodes):
    plugin = TopologyPlacement(s.profiles["default-scheduler"].plugins_map["TopologyPlacementGenerator"]._handle,
                               composite_pod_group=True)
    parent = Placement(INITIAL, [s.cache.snapshot.get(n) for n, _ in placement_nodes])
    return plugin.generate_placements(None, entity, parent)


def _check(result, status, want):
    if want is None:
        assert status is not None and status.code() == Code.ERROR
        assert status.message().startswith("cannot determine domain for already scheduled pods: ")
        return
    assert status is None
    assert {p.name: [i.node().name for i in p.nodes] for p in result.placements} == want


@pytest.mark.parametrize("name", list(GENERATE_CPG))
def test_generate_placements_composite(name):
    key, scheduled, placement_nodes, other_nodes, want = GENERATE_CPG[name]
    s = _scheduler(placement_nodes + other_nodes)
    entity = _root(s, key)
    for i, (path, node_name) in enumerate(scheduled):
        _hang(s, "root", path, f"pod{i}", node_name, assumed=False)
    _check(*_generate(s, entity, placement_nodes), want)


def test_generate_placements_composite_without_constraint():
    """"for cpg without constraint returns placement matching all nodes" (an empty CompositePodGroup)."""
    s = _scheduler([node("node1"), node("node2", foo="bar"), node("node3")])
    entity = PodGroupInfo("", "", COMPOSITE_POD_GROUP_KEY_TYPE, composite_pod_group=CompositePodGroup(name=""))
    _check(*_generate(s, entity, [node("node1"), node("node2", foo="bar")]), {INITIAL: ["node1", "node2"]})


@pytest.mark.parametrize("name", list(GENERATE))
def test_generate_placements_pod_group_with_the_gate(name):
    """The PodGroup rows (cpg=true): a PodGroup entity reads its own state through the hierarchy walk."""
    key, scheduled, placement_nodes, other_nodes, want = GENERATE[name]
    s = _scheduler(placement_nodes + other_nodes)
    pg = PodGroup(name="pg", namespace="default", scheduling_constraints=_constraints(key))
    s.cache.add_pod_group(pg)
    for i, node_name in enumerate(scheduled):
        s.cache.add_pod(make_pod(f"pod{i}").replace(uid=f"pod{i}", scheduling_group=PodSchedulingGroup("pg"))
                        .with_node_name(node_name))
    _check(*_generate(s, QueuedPodGroupInfo(pg), placement_nodes), want)


PROPOSED = [ProposedAssignment(make_pod("proposed-pod-1"), "node1"),
            ProposedAssignment(make_pod("proposed-pod-2"), "node2")]
# TestScorePlacement, the "for cpg" rows: (assigned (path, node), assumed (path, node), score)
SCORE_CPG = {
    "for cpg existing assigned and assumed pods across multi-level hierarchies": (
        [(PATH1, "node2"), (PATH2, "node3")], [(PATH1, "node1")], 5),
    "for cpg with no assumed pods": ([(PATH1, "node1")], [], 3),
    "for cpg with no assigned pods": ([], [(PATH1, "node1")], 3),
    "for cpg with no assigned pods, no assumed pods": ([], [], 2),
}


@pytest.mark.parametrize("name", list(SCORE_CPG))
def test_score_placement_composite(name):
    assigned, assumed, want = SCORE_CPG[name]
    s = _scheduler([node("node1"), node("node2"), node("node3")])
    entity = _root(s, None)
    for i, (path, node_name) in enumerate(assigned):
        _hang(s, "root", path, f"assigned-pod{i}", node_name, assumed=False)
    for i, (path, node_name) in enumerate(assumed):
        _hang(s, "root", path, f"assumed-pod{i}", node_name, assumed=True)
    plugin = PodGroupPodsCount(s.profiles["default-scheduler"].plugins_map["PodGroupPodsCount"]._handle,
                               composite_pod_group=True)
    score, status = plugin.score_placement(None, entity, PodGroupAssignments(Placement(), PROPOSED))
    assert status is None
    assert score == want


def test_score_placement_composite_lookup_error():
    """A leaf the cache does not know (a CompositePodGroup state missing under the root): the
    walk's error is the plugin's Error."""
    s = _scheduler([node("node1")])
    entity = _root(s, None)
    s.cache.composite_groups.states[composite_pod_group_key("default", "root")].add_child(
        composite_pod_group_key("default", "gone"))
    plugin = PodGroupPodsCount(s.profiles["default-scheduler"].plugins_map["PodGroupPodsCount"]._handle,
                               composite_pod_group=True)
    score, status = plugin.score_placement(None, entity, PodGroupAssignments(Placement(), PROPOSED))
    assert (score, status.code(), status.message()) == (
        0, Code.ERROR, "composite pod group state not found for composite pod group compositepodgroup/default/gone")
