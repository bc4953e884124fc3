"""PodGroupPodsCount: upstream ``podgroup_pods_count_test.go`` (v1.37.2) ``TestScorePlacement`` (its
PodGroup rows) and ``TestNormalizePlacementScore``."""
from __future__ import annotations

import pytest

from fastsched import Scheduler
from fastsched.api.objects import PodSchedulingGroup
from fastsched.api.scheduling import PodGroup
from fastsched.features import FeatureGates
from fastsched.framework import Code, Placement, PlacementScore, PodGroupAssignments, ProposedAssignment
from fastsched.framework.podgroups import QueuedPodGroupInfo
from fastsched.plugins.podgrouppodscount import PodGroupPodsCount
from fastsched.testing import make_node, make_pod

PROPOSED = [ProposedAssignment(make_pod("proposed-pod-1"), "node1"), ProposedAssignment(make_pod("proposed-pod-2"),
                                                                                         "node2")]
# name: (assigned pods' nodes, assumed pods' nodes, want score)
SCORE = {
    "existing assigned and assumed pods": (["node2", "node3"], ["node1"], 5),
    "no assumed pods": (["node1"], [], 3),
    "no assigned pods": ([], ["node1"], 3),
    "no assigned pods, no assumed pods": ([], [], 2),
}


@pytest.mark.parametrize("name", list(SCORE))
def test_score_placement(name):
    assigned, assumed, want = SCORE[name]
    s = Scheduler(None, feature_gates=FeatureGates({"GenericWorkload": True, "TopologyAwareWorkloadScheduling": True}))
    s.add_nodes([make_node(n) for n in ("node1", "node2", "node3")])
    pg = PodGroup(name="root", namespace="default")
    s.cache.add_pod_group(pg)

    def pod(prefix, i, node_name):
        p = make_pod(f"{prefix}{i}").replace(uid=f"{prefix}{i}", scheduling_group=PodSchedulingGroup("root"))
        return p.with_node_name(node_name) if node_name else p

    for i, n in enumerate(assigned):
        s.cache.add_pod(pod("assigned-pod", i, n))
    for i, n in enumerate(assumed):  # an unscheduled member the scheduler assumed
        s.cache.add_pod_group_member(pod("assumed-pod", i, ""))
        s.cache.assume_pod(pod("assumed-pod", i, n))
    plugin = s.profiles["default-scheduler"].plugins_map["PodGroupPodsCount"]
    score, status = plugin.score_placement(None, QueuedPodGroupInfo(pg), PodGroupAssignments(Placement(), PROPOSED))
    assert status is None
    assert score == want


NORMALIZE = {
    "distinct scores": ([10, 50, 110], [9, 45, 100]),
    "equal scores": ([50, 50], [100, 100]),
    "single score": ([50], [100]),
    "some minimal score that is far from a group of scores located closely": ([11, 100, 101, 102], [10, 98, 99, 100]),
    "zero scores": ([0, 0], "no pods from pod group are assigned to any of the candidate placements"),
}


@pytest.mark.parametrize("name", list(NORMALIZE))
def test_normalize_placement_score(name):
    scores, want = NORMALIZE[name]
    items = [PlacementScore(Placement(), s) for s in scores]
    status = PodGroupPodsCount(None).normalize_placement_score(None, None, items)
    if isinstance(want, str):
        assert status.code() == Code.ERROR and status.message() == want
        return
    assert status is None
    assert [i.score for i in items] == want


def test_a_missing_pod_group_state_is_the_listers_error():
    s = Scheduler(None, feature_gates=FeatureGates({"GenericWorkload": True, "TopologyAwareWorkloadScheduling": True}))
    plugin = s.profiles["default-scheduler"].plugins_map["PodGroupPodsCount"]
    _, status = plugin.score_placement(None, QueuedPodGroupInfo(PodGroup(name="x", namespace="default")),
                                       PodGroupAssignments(Placement()))
    assert (status.code(), status.message()) == (Code.ERROR, "pod group state not found for pod group default/x")
