"""PreScore's parts kept per pod spec across cycles (``scoring._KeptSpec``): on seeded random
clusters whose pods and nodes change between cycles, the state a cycle builds from the kept parts,
over random subsets of the nodes as the filtered ones, equals a fresh computation (nothing kept)
in its weights, domain counts and registered domains, and gives the same scores and normalized
scores, which equal the per-node Score's."""
from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest

from fastsched.api import LabelSelector
from fastsched.framework import CycleState, NodeScore
from fastsched.plugins.helper.tests.support import single_plugin_framework
from fastsched.plugins.podtopologyspread import NAME, PRE_SCORE_STATE_KEY
from fastsched.plugins.podtopologyspread import scoring
from fastsched.snapshot.snapshot import NodeBatch
from fastsched.testing import random_cluster

from .test_incremental_counts import _clean_snapshot, _with_topology
from .test_pod_topology_spread import HOSTNAME, LIST_DEFAULTS, WORKLOADS, ZONE_LABEL, random_spread_pod

_SELECTORS = (LabelSelector([("app", "In", ("web", "db"))]), LabelSelector([("team", "Exists", ())]),
              LabelSelector([("app", "NotIn", ("cache",))]))


def _keepable_pod(rng: random.Random, i: int):
    """A random spread pod whose constraints are on keys every node has, with selectors that count
    pods, one at least ScheduleAnyway (or none: system-default constraints): what the kept path
    takes; every fourth one left as random_spread_pod makes it."""
    pod = random_spread_pod(rng, i, with_constraints=i % 5 != 4)
    if i % 4 == 3 or not pod.topology_spread_constraints:
        return pod
    constraints = [dataclasses.replace(c, topology_key=rng.choice((ZONE_LABEL, ZONE_LABEL, HOSTNAME)),
                                       label_selector=rng.choice(_SELECTORS))
                   for c in pod.topology_spread_constraints]
    constraints[0] = dataclasses.replace(constraints[0], when_unsatisfiable="ScheduleAnyway", min_domains=None)
    return pod.replace(topology_spread_constraints=tuple(constraints))


def _summary(state) -> tuple:
    return (state.topology_normalizing_weight, sorted(state.ignored_nodes),
            [None if m is None else m.as_dict() for m in state.topology_value_to_pod_counts])


def _scores(plugin, state, pod, batch) -> tuple[list[int], list[int]]:
    scores, status = plugin.score_vectorized(state, pod, batch)
    assert status is None
    raw = scores.tolist()
    assert plugin.normalize_score_vectorized(state, pod, scores, batch) is None
    return raw, scores.tolist()


def _random_change(rng: random.Random, snapshot, spare_pods: list, spare_nodes: list, added: list):
    """Pods land on random nodes (as the cycles before bound them; now and then a terminating one,
    returned for the caller to remove at the next step), one leaves, or a node joins."""
    op = rng.random()
    if op >= 0.55 or not spare_pods:
        if op < 0.8 and added:
            snapshot.remove_pod(added.pop(rng.randrange(len(added))))
        elif op < 0.9 and spare_nodes:
            snapshot.add_node(spare_nodes.pop())
        return None
    names = snapshot.table.node_names[snapshot.table.live].tolist()
    landing = [spare_pods.pop().replace(node_name=rng.choice(names)) for _ in range(min(len(spare_pods), rng.randint(1, 4)))]
    terminating = landing.pop().replace(deletion_timestamp=1.0) if rng.random() < 0.1 else None
    for p in landing if terminating is None else landing + [terminating]:
        snapshot.add_pod(p)
    added.extend(landing)
    return terminating


@pytest.mark.parametrize("seed", range(6))
def test_kept_state_is_a_fresh_one(seed):
    rng = random.Random(seed)
    snapshot = _clean_snapshot(seed)
    spare_nodes, spare_pods = random_cluster(seed + 500, 20, 300)
    spare_nodes = [_with_topology(n).replace(name=f"spare-{i}") for i, n in enumerate(spare_nodes)]
    frameworks = [single_plugin_framework(NAME), single_plugin_framework(NAME, args=LIST_DEFAULTS)]
    for fw in frameworks:
        fw.plugin(NAME).workload_objects = WORKLOADS
    incoming = [_keepable_pod(rng, i) for i in range(10)]
    added: list = []
    kept_cycles = 0
    terminating = None
    for step in range(30):
        if terminating is not None:  # (the full path runs while it lives)
            snapshot.remove_pod(terminating)
        terminating = _random_change(rng, snapshot, spare_pods, spare_nodes, added)
        table = snapshot.table
        live = np.flatnonzero(table.live)
        for i, pod in enumerate(incoming):
            fw = frameworks[i % 2]
            fw.set_snapshot_shared_lister(snapshot)
            plugin = fw.plugin(NAME)
            rows = np.array(rng.sample(live.tolist(), rng.randint(2, len(live))), dtype=np.int64)
            batch = NodeBatch(table, rows)
            state = CycleState()
            if plugin.pre_score(state, pod, batch) is not None:
                continue
            got = state.read(PRE_SCORE_STATE_KEY)
            kept_cycles += got.score_parts is not None
            got_scores = _scores(plugin, state, pod, batch)
            kept = dict(scoring._KEPT)
            scoring._KEPT.clear()
            fresh_state = CycleState()
            assert plugin.pre_score(fresh_state, pod, batch) is None
            scoring._KEPT.update(kept)  # (the later cycles read the parts kept before)
            want = fresh_state.read(PRE_SCORE_STATE_KEY)
            assert want.score_parts is None
            assert got_scores == _scores(plugin, fresh_state, pod, batch)
            # the per-node Score and NormalizeScore on the kept state
            views = list(batch)
            per_node = [plugin.score(state, pod, v)[0] for v in views]
            assert per_node == got_scores[0]
            node_scores = [NodeScore(v.name, x) for v, x in zip(views, per_node)]
            plugin.normalize_score(state, pod, node_scores)
            assert [x.score for x in node_scores] == got_scores[1]
            assert _summary(got) == _summary(want)
            assert got.constraints == want.constraints
    assert kept_cycles >= 20
