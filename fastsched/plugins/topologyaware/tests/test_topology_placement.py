"""TopologyPlacementGenerator: upstream ``topology_placement_test.go`` ``TestGeneratePlacements``
(v1.37.2), its PodGroup rows (CompositePodGroup off)."""
from __future__ import annotations

import numpy as np
import pytest

from fastsched import Scheduler
from fastsched.api.objects import PodSchedulingGroup
from fastsched.api.scheduling import PodGroup, PodGroupSchedulingConstraints, TopologyConstraint
from fastsched.features import FeatureGates
from fastsched.framework import Code, Placement
from fastsched.framework.podgroups import QueuedPodGroupInfo
from fastsched.testing import make_node, make_pod


def node(name, **labels):
    return (name, labels)


def group(key=None):
    constraints = None if key is None else PodGroupSchedulingConstraints((TopologyConstraint(key),))
    return PodGroup(name="pg", namespace="default", scheduling_constraints=constraints)


INITIAL = "test-placement"
# name: (topology key, scheduled pods' nodes, placement nodes, other nodes, want {placement: nodes} or None = Error)
GENERATE = {
    "without constraint returns placement matching all nodes": (
        None, [], [node("node1"), node("node2", foo="bar")], [node("node3")], {INITIAL: ["node1", "node2"]}),
    "with topology key constraint, returns placement for each topology domain": (
        "topology1", [], [node("node0", topology2="d1"), node("node1", topology2="d4"), node("node2", topology1="d1"),
                          node("node3", topology1="d2"), node("node4", topology1="d1"), node("node5", topology1="d3")],
        [], {"d1": ["node2", "node4"], "d2": ["node3"], "d3": ["node5"]}),
    "without matching topology label, returns empty": (
        "topology3", [], [node("node0", topology2="d1"), node("node1", topology2="d4"), node("node2", topology1="d1"),
                          node("node3", topology1="d2"), node("node4", topology1="d1"), node("node5", topology1="d3")],
        [], {}),
    "with pods already scheduled in a single domain, returns that domain": (
        "topology", ["node2", "node3"], [node("node0", topology="d2"), node("node1", topology="d1")],
        [node("node2", topology="d1"), node("node3", topology="d1")], {"d1": ["node1"]}),
    "with pods already scheduled in a single domain not present in current placement, returns empty": (
        "topology", ["node2", "node3"], [node("node0", topology="d2")],
        [node("node2", topology="d1"), node("node3", topology="d1")], {}),
    "with pods already scheduled in conflicting domains, returns error": (
        "topology", ["node2", "node3"], [node("node0", topology="d2"), node("node1", topology="d1")],
        [node("node2", topology="d0"), node("node3", topology="d1")], None),
    "with already scheduled pod on node outside of snapshot, returns error": (
        "topology", ["node2", "node4"], [node("node0", topology="d2"), node("node1", topology="d1")],
        [node("node2", topology="d1"), node("node3", topology="d1")], None),
    "with already scheduled pod on node without topology label, returns error": (
        "topology", ["node2"], [node("node1", topology="d2")], [node("node2", foo="bar")], None),
}


def _plugin_and_parent(key, scheduled, placement_nodes, other_nodes):
    s = Scheduler(None, feature_gates=FeatureGates({"GenericWorkload": True, "TopologyAwareWorkloadScheduling": True}))
    s.add_nodes([make_node(n, labels=labels) for n, labels in placement_nodes + other_nodes])
    pg = group(key)
    s.cache.add_pod_group(pg)
    for i, node_name in enumerate(scheduled):
        s.cache.add_pod(make_pod(f"pod{i}").replace(uid=f"pod{i}", scheduling_group=PodSchedulingGroup("pg"))
                        .with_node_name(node_name))
    fw = s.profiles["default-scheduler"]
    snapshot = s.cache.snapshot
    names = [n for n, _ in placement_nodes]
    parent = Placement(INITIAL, [snapshot.get(n) for n in names])
    return fw.plugins_map["TopologyPlacementGenerator"], QueuedPodGroupInfo(pg), parent


@pytest.mark.parametrize("name", list(GENERATE))
def test_generate_placements(name):
    key, scheduled, placement_nodes, other_nodes, want = GENERATE[name]
    plugin, entity, parent = _plugin_and_parent(key, scheduled, placement_nodes, other_nodes)
    result, status = plugin.generate_placements(None, entity, parent)
    if want is None:
        assert status is not None and status.code() == Code.ERROR
        assert status.message().startswith("cannot determine domain for already scheduled pods: ")
        return
    assert status is None
    got = {(p.name or INITIAL): [n.node().name for n in p.nodes] for p in result.placements}
    assert got == want
    if key is None:
        assert result.placements == [parent]  # the parent placement itself


def test_error_messages():
    cases = {
        "with pods already scheduled in conflicting domains, returns error": "more than 1 domain found for pod group: "
                                                                             "d0, d1",
        "with already scheduled pod on node outside of snapshot, returns error": 'getting node for pod default/pod1: '
                                                                                 'nodeinfo not found for node name '
                                                                                 '"node4"',
        "with already scheduled pod on node without topology label, returns error": "no topology domain found for "
                                                                                    "pod default/pod0",
    }
    for name, text in cases.items():
        plugin, entity, parent = _plugin_and_parent(*GENERATE[name][:4])
        _, status = plugin.generate_placements(None, entity, parent)
        assert status.message() == "cannot determine domain for already scheduled pods: " + text


def test_domains_in_order_of_first_appearance_over_a_node_batch():
    """fastsched's order of the domains (upstream: Go map order): first appearance among the
    parent's nodes; the placements' nodes are NodeBatches of the snapshot's rows."""
    nodes = [node(f"n{i}", zone=z) for i, z in enumerate("bab")]
    plugin, entity, _ = _plugin_and_parent("zone", [], nodes, [])
    snapshot = plugin._handle.snapshot_shared_lister()
    result, status = plugin.generate_placements(None, entity, Placement(nodes=snapshot.batch()))
    assert status is None
    assert [(p.name, list(p.nodes.names)) for p in result.placements] == [("b", ["n0", "n2"]), ("a", ["n1"])]


@pytest.mark.parametrize("seed", range(20))
def test_a_node_batch_gives_the_placements_of_the_node_by_node_loop(seed):
    """The label-column path (the scheduler's NodeBatch) and the loop over NodeInfos agree: the
    same domains in the same order, the same nodes in each, with and without a required domain."""
    import random

    rng = random.Random(seed)
    nodes = []
    for i in range(rng.randint(1, 12)):
        labels = {"zone": rng.choice("abcd")} if rng.random() < 0.8 else {"other": "x"}
        nodes.append(node(f"n{i}", **labels))
    scheduled = [rng.choice(nodes)[0]] if rng.random() < 0.4 else []
    plugin, entity, _ = _plugin_and_parent("zone", scheduled, nodes, [])
    batch = plugin._handle.snapshot_shared_lister().batch()
    sub = batch.select(np.array(sorted(rng.sample(range(len(batch)), rng.randint(1, len(batch))))))
    by_batch, st1 = plugin.generate_placements(None, entity, Placement(nodes=sub))
    by_list, st2 = plugin.generate_placements(None, entity, Placement(nodes=list(sub)))
    assert (st1 is None) == (st2 is None)
    if st1 is None:
        got = [(p.name, list(p.nodes.names)) for p in by_batch.placements]
        assert got == [(p.name, [n.node().name for n in p.nodes]) for p in by_list.placements]
