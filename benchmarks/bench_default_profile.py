"""Filter + Score for one pod with the default profile: batch path against the per-node path.

Run: python -m pytest benchmarks/bench_default_profile.py --benchmark-only
Every node is evaluated (as explain() does, no sampling), on a generated cluster where most nodes
fit, so Score runs on thousands of nodes.

What is timed: one pod's PreFilter, Filter, PreScore and Score over every node of a snapshot built
in the set-up. The batch test's pytest-benchmark figures are *warm* calls (the same pod again on
the same table, per-table and per-spec caches filled); extra_info adds the *first* call on the
fresh snapshot (cold), the warm median and one per-node call (``common.plugin_timings``, CPU time
of the process). The per-node test times the per-node path alone.
"""
import numpy as np
import pytest
from common import plugin_timings

from fastsched import load_config
from fastsched.framework import CycleState
from fastsched.plugins import in_tree_registry
from fastsched.runtime import new_framework
from fastsched.sim.generators import ClusterSpec, generate_cluster
from fastsched.snapshot import build_snapshot
from fastsched.testing import make_pod

_CACHE: dict = {}


def setup(n_nodes, fresh=False):
    """(snapshot, framework) at ``n_nodes`` nodes; ``fresh`` builds them anew (nothing run on them)."""
    if fresh or n_nodes not in _CACHE:
        spec = ClusterSpec.from_dict({
            "nodes": n_nodes, "seed": 1, "zones": 3,
            "shapes": [{"cpu": 8, "memory": "32Gi", "pods": 110, "weight": 3},
                       {"cpu": 32, "memory": "128Gi", "pods": 250, "weight": 1}],
            "labels": {"disktype": {"values": ["ssd", "hdd"], "fraction": 0.8}},
            "taints": [{"key": "spot", "value": "true", "effect": "PreferNoSchedule", "fraction": 0.2}],
            "images": {"pool": [{"name": "nginx:1.25", "size": "60Mi"}, {"name": "redis:7", "size": "120Mi"}],
                       "per_node": 1},
            "pods": {"count": n_nodes, "shapes": [{"cpu": "500m", "memory": "1Gi"}], "labels": {"app": ["web", "db"]}}})
        nodes, pods = generate_cluster(spec)
        snap = build_snapshot(nodes, pods)
        fw = new_framework(in_tree_registry(), load_config().profiles[0], snapshot_shared_lister=snap)
        _CACHE[n_nodes] = (snap, fw)
    return _CACHE[n_nodes]


POD = make_pod("bench", cpu="100m", memory="200Mi", images=("nginx:1.25",))


def filter_and_score(fw, snap, per_node):
    state = CycleState()
    batch = snap.batch()
    fw.run_pre_filter_plugins(state, POD, batch)
    nodes = list(batch) if per_node else batch
    if per_node:
        feasible = [ni for ni in nodes if fw.run_filter_plugins(state, POD, ni) is None]
    else:
        res = fw.run_filter_plugins_vectorized(state, POD, nodes)
        feasible = nodes.select(np.flatnonzero(res.feasible()))
    fw.run_pre_score_plugins(state, POD, feasible)
    m, st = fw.run_score_plugins_matrix(state, POD, feasible)
    assert st is None
    return m.totals


@pytest.mark.parametrize("n_nodes", [5_000, 100_000])
def test_batch(benchmark, n_nodes):
    snap, fw = setup(n_nodes, fresh=True)
    benchmark.extra_info.update(**plugin_timings(lambda: filter_and_score(fw, snap, False),
                                                 lambda: filter_and_score(fw, snap, True), warm_calls=10))
    totals = benchmark(filter_and_score, fw, snap, False)
    benchmark.extra_info.update(nodes=n_nodes, feasible=len(totals))


@pytest.mark.parametrize("n_nodes", [5_000, 100_000])
def test_per_node(benchmark, n_nodes):
    snap, fw = setup(n_nodes)
    rounds = 3 if n_nodes <= 5_000 else 1
    totals = benchmark.pedantic(filter_and_score, args=(fw, snap, True), rounds=rounds, iterations=1)
    benchmark.extra_info.update(nodes=n_nodes, feasible=len(totals))
    assert np.array_equal(totals, filter_and_score(fw, snap, False))
