"""The composite group cycle's result bookkeeping: upstream's ``schedule_one_podgroup_test.go``
``TestScorePlacementPodGroupAssignments`` (v1.37.2; the assignments PlacementScore plugins are given
per placement: here straight from ``makeCompositePodGroupAssignments``, which builds them) and the
failure propagation of ``completeCompositePodGroupAlgorithmResultMap``."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from fastsched.api.compositepodgroup import CompositePodGroup
from fastsched.api.scheduling import PodGroup
from fastsched.framework.composite import COMPOSITE_POD_GROUP_KEY_TYPE, PodGroupInfo
from fastsched.framework.interface import Placement
from fastsched.framework.podgroups import POD_GROUP_KEY_TYPE
from fastsched.framework.status import Code, Status
from fastsched.scheduler.composite_algorithm import (complete_composite_results, make_composite_pod_group_assignments,
                                                    successful_leaf_results)
from fastsched.testing import make_pod

OK = Status(Code.SUCCESS)


def tree(name, *children) -> PodGroupInfo:
    """A composite group when it has children, else a PodGroup (the test's buildTree)."""
    if children:
        return PodGroupInfo("default", name, COMPOSITE_POD_GROUP_KEY_TYPE,
                            composite_pod_group=CompositePodGroup(name=name), children=list(children))
    return PodGroupInfo("default", name, POD_GROUP_KEY_TYPE, pod_group=PodGroup(name=name))


def pod_res(pod, node, status=OK):
    return SimpleNamespace(pinfo=SimpleNamespace(pod=make_pod(pod)), node_name=node, status=status, state=None)


def res(status=OK, *pods):
    return SimpleNamespace(status=status, pod_results=list(pods), placement_state=object())


def keyed(root: PodGroupInfo, by_name: dict) -> dict:
    nodes, stack = {}, [root]
    while stack:
        n = stack.pop()
        nodes[n.name] = n.key
        stack.extend(n.children)
    return {nodes[name]: r for name, r in by_name.items()}


FLAT = tree("rootcpg", tree("pg1"), tree("pg2"))
MULTI = tree("rootcpg", tree("midcpg1", tree("pg1")), tree("midcpg2", tree("pg2")))
LEAVES = tree("rootcpg", tree("pg1"), tree("pg3"))
UNSCHEDULABLE = Status(Code.UNSCHEDULABLE, "minGroupCount not met")

# (tree, {placement: {group: result}}, expected {placement: {pod: node}})
SCORE_ASSIGNMENTS = {
    "flat composite pod group with all successful leaves": (FLAT, {
        "placement1": {"rootcpg": res(), "pg1": res(OK, pod_res("p1", "node1")), "pg2": res(OK, pod_res("p2", "node2"))},
        "placement2": {"rootcpg": res(), "pg1": res(OK, pod_res("p1", "node3")), "pg2": res(OK, pod_res("p2", "node4"))},
    }, {"placement1": {"p1": "node1", "p2": "node2"}, "placement2": {"p1": "node3", "p2": "node4"}}),
    "multi-level tree where an intermediate subtree fails": (MULTI, {
        "placement1": {"rootcpg": res(), "midcpg1": res(), "pg1": res(OK, pod_res("p1", "node1")),
                       "midcpg2": res(UNSCHEDULABLE), "pg2": res(OK, pod_res("p2", "node2"))},
        "placement2": {"rootcpg": res(), "midcpg1": res(), "pg1": res(OK, pod_res("p1", "node3")),
                       "midcpg2": res(), "pg2": res(OK, pod_res("p2", "node4"))},
    }, {"placement1": {"p1": "node1"}, "placement2": {"p1": "node3", "p2": "node4"}}),
    "missing subtree result due to short-circuiting in PlacementFeasible": (MULTI, {
        "placement1": {"rootcpg": res(), "midcpg1": res(), "pg1": res(OK, pod_res("p1", "node1"))},
        "placement2": {"rootcpg": res(), "midcpg2": res(), "pg2": res(OK, pod_res("p2", "node2"))},
    }, {"placement1": {"p1": "node1"}, "placement2": {"p2": "node2"}}),
    "leaf pod group with some failed or unassigned pods": (LEAVES, {
        "placement1": {"rootcpg": res(), "pg1": res(OK, pod_res("p1", "node1")),
                       "pg3": res(OK, pod_res("p3", "node3"), pod_res("p4", "", Status(Code.UNSCHEDULABLE)))},
        "placement2": {"rootcpg": res(), "pg1": res(OK, pod_res("p1", "node2")),
                       "pg3": res(OK, pod_res("p3", ""), pod_res("p4", "node4"))},
    }, {"placement1": {"p1": "node1", "p3": "node3"}, "placement2": {"p1": "node2", "p4": "node4"}}),
}


@pytest.mark.parametrize("name", list(SCORE_ASSIGNMENTS))
def test_score_placement_pod_group_assignments(name):
    root, by_placement, want = SCORE_ASSIGNMENTS[name]
    successful = [(Placement(p), keyed(root, groups)) for p, groups in by_placement.items()]
    assignments, states = make_composite_pod_group_assignments(root, successful)
    got = {a.name: {pa.pod.name: pa.node_name for pa in a.proposed_assignments} for a in assignments}
    assert got == want
    assert states == [subtree[root.key].placement_state for _, subtree in successful]


def test_successful_leaves_depth_first():
    """Leaves in children order, a failed ancestor hiding its subtree."""
    root = tree("r", tree("a", tree("a1"), tree("a2")), tree("b"), tree("c", tree("c1")))
    results = keyed(root, {"r": res(), "a": res(), "a1": res(OK, pod_res("x", "n")), "a2": res(OK, pod_res("y", "n")),
                           "b": res(OK, pod_res("z", "n")), "c": res(UNSCHEDULABLE), "c1": res(OK, pod_res("w", "n"))})
    assert [r.pod_results[0].pinfo.pod.name for r in successful_leaf_results(root, results)] == ["x", "y", "z"]


def test_complete_composite_results():
    """completeCompositePodGroupAlgorithmResultMap: a failed parent invalidates its succeeded
    children (not the failed ones), a group the walk never reached gets its parent's status."""
    root = tree("r", tree("a", tree("a1"), tree("a2")), tree("b"), tree("c", tree("c1")))
    a2_failure = Status(Code.UNSCHEDULABLE, "a2 failed")
    results = keyed(root, {"r": res(), "a": res(UNSCHEDULABLE), "a1": res(), "a2": res(a2_failure), "b": res()})
    complete_composite_results(root, results, None, lambda pgi, status: SimpleNamespace(status=status, pod_results=[]))
    by_name = {k.name: r.status for k, r in results.items()}
    assert by_name["a1"] is UNSCHEDULABLE and by_name["a2"] is a2_failure
    assert by_name["b"] is OK and by_name["r"] is OK
    assert by_name["c"] is OK and by_name["c1"] is OK  # never reached: the (successful) parent's status
