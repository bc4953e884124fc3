"""PreFilter and PreScore ask the lister whether the NodeBatch they were handed is every row it
lists (their planned paths read their counts over every row) through ``Snapshot.listed_extent``,
without building the lister's NodeBatch. Checked on seeded random clusters changed between cycles
(nodes removed and added: the listed order moves) against ``list()`` itself, and the plugin's states
on every row, on a random part of the rows and on an equal snapshot's batch (another table) against
the walking path's (upstream's algorithm) over the same nodes."""
from __future__ import annotations

import random

import numpy as np
import pytest

from fastsched.config.args import InterPodAffinityArgs
from fastsched.snapshot import build_snapshot
from fastsched.snapshot.snapshot import NodeBatch

from .generators import NAMESPACES, random_affinity_cluster, random_change, random_incoming_pod
from .test_shape_plans import _plugin, _same, _states


def _extent_of_list(snap):
    listed = snap.node_infos().list()
    return listed.table, len(listed.rows)


@pytest.mark.parametrize("seed", range(6))
def test_listed_extent_is_list_s_table_and_row_count(seed):
    rng = random.Random(7000 + seed)
    nodes, pods = random_affinity_cluster(seed, n_nodes=25, n_pods=60)
    snap = build_snapshot(nodes, pods)
    on_table = {p.uid: p for p in pods if p.node_name in snap.table.row_of}
    namespaces = dict(NAMESPACES)
    ids = {"pod": len(pods), "node": len(nodes)}
    removed = 0
    for step in range(25):
        table, n = snap.listed_extent()
        assert (table, n) == _extent_of_list(snap) and table is snap.table
        if rng.random() < 0.4 and len(snap.table) > 5:
            name = rng.choice(sorted(snap.table.row_of))
            for uid in [u for u, p in on_table.items() if p.node_name == name]:
                del on_table[uid]
            snap.remove_node(name)
            removed += 1
        random_change(rng, snap, on_table, namespaces, ids, step)
    assert removed > 0


@pytest.mark.parametrize("seed", range(6))
def test_states_on_all_some_and_other_tables_rows_match_the_walking_path(seed):
    rng = random.Random(8000 + seed)
    nodes, pods = random_affinity_cluster(seed, n_nodes=30, n_pods=90)
    snap = build_snapshot(nodes, pods)
    other = build_snapshot(nodes, pods)  # equal nodes and pods, another table
    args = InterPodAffinityArgs(hard_pod_affinity_weight=seed % 3)
    pl = _plugin(args, dict(NAMESPACES), snap)
    kinds = {"all": 0, "part": 0, "other": 0}
    for i in range(40):
        incoming = random_incoming_pod(random.Random(100 * seed + i % 7), i)
        full = snap.batch()
        kind = ("all", "part", "other")[i % 3]
        if kind == "all":
            batch = full
        elif kind == "part":
            keep = np.array(sorted(rng.sample(range(len(full)), rng.randrange(1, len(full)))), dtype=np.int64)
            batch = NodeBatch(snap.table, full.rows[keep])
        else:
            batch = other.batch()
        assert pl._full_listed((batch.table, batch.rows)) == (kind == "all")
        got = _states(pl, incoming, batch)
        _same(got, _states(pl, incoming, [snap.get(v.name) for v in batch]))  # walking, same nodes
        kinds[kind] += 1
    assert min(kinds.values()) > 0
