"""NodeResourcesFit's ``ScorePlacement`` (TopologyAwareWorkloadScheduling): upstream ``fit_test.go``
``TestScorePlacement_Resources`` (v1.37.2)."""
from __future__ import annotations

import numpy as np
import pytest

from fastsched.config.args import LEAST_ALLOCATED, NodeResourcesFitArgs, ResourceSpec, ScoringStrategy
from fastsched.features import FeatureGates
from fastsched.framework import Code, Placement, PodGroupAssignments, ProposedAssignment
from fastsched.plugins.noderesources import FACTORIES, FIT_NAME
from fastsched.snapshot import build_snapshot

from .common import node, pod, requests

GPU = "nvidia.com/gpu"


class _Handle:
    feature_gates = FeatureGates({"GenericWorkload": True, "TopologyAwareWorkloadScheduling": True})


def _n(name, gpu=None):
    return node(name, 5000, 5000, extra=None if gpu is None else {GPU: gpu})


def _req(cpu, mem, gpu=None):
    return requests(cpu, mem, None if gpu is None else {GPU: gpu})


CPU_MEM = [("cpu", 1), ("memory", 1)]
TWO_PODS = [("foo", _req(1000, 0)), ("bar", _req(2000, 2000))]
# name: (nodes, placement node names, pod group pods, assignments, pre-existing pods, resources, want)
CASES = {
    "Computes score based on total requests": (
        [_n("node1"), _n("node2")], ["node1", "node2"], TWO_PODS, {"foo": "node1", "bar": "node2"}, [], CPU_MEM, 25),
    "Computes score using weights": (
        [_n("node1"), _n("node2")], ["node1", "node2"], TWO_PODS, {"foo": "node1", "bar": "node2"}, [],
        [("cpu", 4), ("memory", 1)], 28),
    "Handles multiple pods per node": (
        [_n("node1"), _n("node2")], ["node1", "node2"], TWO_PODS, {"foo": "node1", "bar": "node1"}, [],
        [("cpu", 4), ("memory", 1)], 28),
    "Does not include nodes from outside of placement": (
        [_n("node1"), _n("node2"), _n("node3")], ["node1", "node2"], TWO_PODS, {"foo": "node1", "bar": "node2"}, [],
        CPU_MEM, 25),
    "Includes pre-existing pods from outside of pod group": (
        [_n("node1"), _n("node2")], ["node1", "node2"], TWO_PODS, {"foo": "node1", "bar": "node2"},
        [("baz", "node1", _req(1000, 0))], CPU_MEM, 30),
    "Includes scalar resources if any pod in pod group has nonzero requests": (
        [_n("node1", 5), _n("node2", 5)], ["node1", "node2"],
        [("foo", _req(1000, 0, 0)), ("bar", _req(1000, 2000, 1))], {"foo": "node1", "bar": "node2"},
        [("baz", "node1", _req(1000, 0, 0))], CPU_MEM + [(GPU, 1)], 20),
    "Does not include scalar resources if all pods in pod group have zero requests": (
        [_n("node1", 5), _n("node2", 5)], ["node1", "node2"],
        [("foo", _req(1000, 0, 0)), ("bar", _req(1000, 2000, 0))], {"foo": "node1", "bar": "node2"},
        [("baz", "node1", _req(1000, 0, 1))], CPU_MEM + [(GPU, 1)], 25),
}


@pytest.mark.parametrize("name", list(CASES))
def test_score_placement_resources(name):
    nodes, placement_names, group_pods, assignments, existing, resources, want = CASES[name]
    snapshot = build_snapshot(nodes, [pod(n, r, node_name=host) for n, host, r in existing])
    args = NodeResourcesFitArgs(scoring_strategy=ScoringStrategy(LEAST_ALLOCATED,
                                                                 [ResourceSpec(n, w) for n, w in resources]))
    fit = FACTORIES[FIT_NAME](args, _Handle())
    proposed = [ProposedAssignment(pod(n, r), assignments[n]) for n, r in group_pods if n in assignments]
    placement = Placement(nodes=[snapshot.get(n) for n in placement_names])
    score, status = fit.score_placement(None, None, PodGroupAssignments(placement, proposed))
    assert status is None
    assert score == want


def test_without_the_gate_fit_has_no_placement_scorer():
    fit = FACTORIES[FIT_NAME](None, None)
    assert fit.placement_scorer is None
    _, status = fit.score_placement(None, None, PodGroupAssignments(Placement()))
    assert status.code() == Code.ERROR


@pytest.mark.parametrize("seed", range(30))
def test_a_node_batch_scores_as_node_by_node(seed):
    """The columns path (a placement's NodeBatch, as the scheduler passes it) and the node-by-node
    path (a list of NodeInfos) agree: random nodes with and without GPUs, pods on them, members
    requesting GPUs or not, weighted resources."""
    import random

    rng = random.Random(seed)
    nodes = [node(f"n{i}", rng.choice((2000, 4000, 8000)), rng.choice((4000, 16000)),
                  extra={GPU: rng.choice((2, 4))} if rng.random() < 0.5 else None) for i in range(rng.randint(1, 8))]
    existing = [pod(f"e{j}", requests(rng.choice((0, 500, 1000)), rng.choice((0, 1000)),
                                      {GPU: 1} if rng.random() < 0.3 else None),
                    node_name=rng.choice(nodes).name) for j in range(rng.randint(0, 10))]
    snapshot = build_snapshot(nodes, existing)
    resources = [("cpu", rng.randint(1, 3)), ("memory", 1)] + ([(GPU, 2)] if rng.random() < 0.7 else [])
    args = NodeResourcesFitArgs(scoring_strategy=ScoringStrategy(LEAST_ALLOCATED,
                                                                 [ResourceSpec(n, w) for n, w in resources]))
    fit = FACTORIES[FIT_NAME](args, _Handle())
    members = [ProposedAssignment(pod(f"m{k}", requests(rng.choice((None, 250, 1000)), rng.choice((None, 500)),
                                                        {GPU: 1} if rng.random() < 0.3 else None)), "n0")
               for k in range(rng.randint(0, 4))]
    names = rng.sample([n.name for n in nodes], rng.randint(1, len(nodes)))
    batch = snapshot.batch()
    rows = batch.select(np.array([batch.names.index(n) for n in names]))
    by_columns, _ = fit.score_placement(None, None, PodGroupAssignments(Placement(nodes=rows), members))
    by_nodes, _ = fit.score_placement(None, None, PodGroupAssignments(Placement(nodes=[snapshot.get(n) for n in names]),
                                                                       members))
    assert by_columns == by_nodes
