"""PodTopologySpread over the node table after random pod and node changes: the table's count
subscriptions and the cached domain order (both kept across cycles) give the same PreFilter and
PreScore states, Filter verdicts and scores as walking the NodeInfos from scratch."""
from __future__ import annotations

import random

import pytest

from fastsched.plugins.helper.tests.support import single_plugin_framework
from fastsched.plugins.podtopologyspread import NAME
from fastsched.snapshot import build_snapshot
from fastsched.testing import random_cluster

from .test_pod_topology_spread import (HOSTNAME, LIST_DEFAULTS, ZONE_LABEL as ZONE, WORKLOADS, assert_same_state, random_spread_pod,
                                       random_spread_snapshot)


def _clean_snapshot(seed: int):
    """Every node with every topology label and no terminating pod: PreFilter reads the count
    subscriptions' per-domain views."""
    nodes, pods = random_cluster(seed, 60, 150)
    return build_snapshot([_with_topology(n) for n in nodes], pods)


def _with_topology(node):
    labels = dict(node.labels)
    labels.setdefault(ZONE, "zone-x")
    labels.setdefault(HOSTNAME, node.name)
    return node.replace(labels=labels)


@pytest.mark.parametrize("clean", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_states_after_random_changes(seed, clean):
    rng = random.Random(seed)
    snapshot = _clean_snapshot(seed) if clean else random_spread_snapshot(seed, n_nodes=60, n_pods=150)
    spare_nodes, spare_pods = random_cluster(seed + 1000, 30, 200)
    if clean:
        spare_nodes = [_with_topology(n) for n in spare_nodes]
    spare_nodes = [n.replace(name=f"spare-{i}") for i, n in enumerate(spare_nodes)]
    frameworks = [single_plugin_framework(NAME, weight=2), single_plugin_framework(NAME, args=LIST_DEFAULTS)]
    for fw in frameworks:
        fw.plugin(NAME).workload_objects = WORKLOADS
    incoming = [random_spread_pod(rng, i, with_constraints=i < 4) for i in range(6)]
    added = []
    for step in range(25):
        names = snapshot.table.node_names[snapshot.table.live].tolist()
        op = rng.random()
        if op < 0.4 and spare_pods:
            p = spare_pods.pop().replace(node_name=rng.choice(names))
            if rng.random() < 0.1 and not clean:
                p = p.replace(deletion_timestamp=1.0)
            snapshot.add_pod(p)
            added.append(p)
        elif op < 0.6 and added:
            snapshot.remove_pod(added.pop(rng.randrange(len(added))))
        elif op < 0.75 and spare_nodes:
            snapshot.add_node(spare_nodes.pop())
        elif op < 0.85 and len(names) > 5:
            name = rng.choice(names)
            snapshot.remove_node(name)
            added = [p for p in added if p.node_name != name]
        for i, pod in enumerate(incoming):
            fw = frameworks[i % 2]
            fw.set_snapshot_shared_lister(snapshot)
            assert_same_state(fw.plugin(NAME), snapshot, pod)


@pytest.mark.parametrize("seed", range(3))
def test_pre_score_counts_stay_those_of_pre_score(seed):
    """A PreScore state's per-domain counts are the counts when PreScore ran: the pods the cycle
    assumes afterwards (added to the table, which moves its count subscriptions) do not change
    what the state reads (its DomainCounts are built on first read, after those adds here)."""
    from fastsched.framework import CycleState
    from fastsched.plugins.podtopologyspread import PRE_SCORE_STATE_KEY

    rng = random.Random(seed)
    snapshot = _clean_snapshot(seed)
    fw = single_plugin_framework(NAME)
    plugin = fw.plugin(NAME)
    plugin.workload_objects = WORKLOADS
    fw.set_snapshot_shared_lister(snapshot)
    checked = 0
    for i in range(8):
        incoming = random_spread_pod(rng, i, with_constraints=i < 4)
        state, views_state = CycleState(), CycleState()
        if plugin.pre_score(state, incoming, snapshot.batch()) is not None:
            continue
        plugin.pre_score(views_state, incoming, list(snapshot.batch()))
        want = [None if m is None else m.as_dict()
                for m in views_state.read(PRE_SCORE_STATE_KEY).topology_value_to_pod_counts]
        names = snapshot.table.node_names[snapshot.table.live].tolist()
        for k in range(5):  # pods like it (they match its selectors) land after PreScore
            snapshot.add_pod(incoming.replace(name=f"assumed-{i}-{k}", uid=f"assumed-{i}-{k}",
                                              node_name=rng.choice(names)))
        got = [None if m is None else m.as_dict()
               for m in state.read(PRE_SCORE_STATE_KEY).topology_value_to_pod_counts]
        assert got == want
        checked += any(m for m in want if m is not None)
    assert checked >= 2
