"""The volume plugins' vectorized Filter against their per-node Filter, on seeded random clusters
with PersistentVolumes, claims of every kind, classes, CSINodes and capacities (through the
whole default profile, with :func:`fastsched.testing.assert_paths_equivalent`)."""
from __future__ import annotations

import random

import pytest

from fastsched.api.load import load_objects
from fastsched.config import load_config
from fastsched.framework.objects import ObjectStore
from fastsched.plugins import in_tree_registry
from fastsched.runtime import new_framework
from fastsched.sim.storage import random_storage_cluster
from fastsched.snapshot import build_snapshot
from fastsched.testing import assert_paths_equivalent, single_plugin_profile

PLUGINS = ["VolumeBinding", "VolumeZone", "NodeVolumeLimits", "VolumeRestrictions"]


def _cluster(seed: int):
    node_ms, object_ms, pod_ms = random_storage_cluster(seed, nodes=14, pvs=24, claims=20)
    rng = random.Random(seed)
    nodes = load_objects(node_ms)
    objects = load_objects(object_ms)
    pods = load_objects(pod_ms)
    existing, pending = [], []
    for p in pods:
        if rng.random() < 0.5:
            existing.append(p.with_node_name(rng.choice(nodes).name))
        else:
            pending.append(p)
    return nodes, objects, existing, pending


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("plugin", PLUGINS)
def test_vectorized_filter_matches_per_node(seed, plugin):
    nodes, objects, existing, pending = _cluster(seed)
    snapshot = build_snapshot(nodes, existing)
    fw = new_framework(in_tree_registry(), single_plugin_profile(plugin), snapshot_shared_lister=snapshot,
                       client=ObjectStore(objects))
    for p in pending + existing[:3]:
        assert_paths_equivalent(fw, snapshot, p, pre_filter_per_node=True)


@pytest.mark.parametrize("seed", range(4))
def test_default_profile_paths_agree(seed):
    nodes, objects, existing, pending = _cluster(100 + seed)
    snapshot = build_snapshot(nodes, existing)
    cfg = load_config(None)
    fw = new_framework(in_tree_registry(), cfg.profiles[0], snapshot_shared_lister=snapshot,
                       client=ObjectStore(objects))
    exercised = 0
    for p in pending:
        out = assert_paths_equivalent(fw, snapshot, p, pre_filter_per_node=True)
        exercised += bool(out.get("feasible"))
    assert exercised >= 0


@pytest.mark.parametrize("seed", range(6))
def test_capacity_scoring_paths_agree(seed):
    """With StorageCapacityScoring on, VolumeBinding's vectorized Score (per Filter group) equals
    its per-node Score; at least one case scores something other than 0."""
    nodes, objects, existing, pending = _cluster(200 + seed)
    snapshot = build_snapshot(nodes, existing)
    fw = new_framework(in_tree_registry(), single_plugin_profile("VolumeBinding"), snapshot_shared_lister=snapshot,
                       client=ObjectStore(objects), feature_gates={"StorageCapacityScoring": True})
    plugin = fw.plugin("VolumeBinding")
    assert plugin.scorer is not None
    for p in pending:
        assert_paths_equivalent(fw, snapshot, p, pre_filter_per_node=True)


def test_capacity_scoring_scores_something_on_random_clusters():
    from fastsched.framework.cycle_state import CycleState

    nonzero = 0
    for seed in range(6):
        nodes, objects, existing, pending = _cluster(200 + seed)
        snapshot = build_snapshot(nodes, existing)
        fw = new_framework(in_tree_registry(), single_plugin_profile("VolumeBinding"),
                           snapshot_shared_lister=snapshot, client=ObjectStore(objects),
                           feature_gates={"StorageCapacityScoring": True})
        plugin = fw.plugin("VolumeBinding")
        for p in pending:
            state = CycleState()
            infos = list(snapshot.batch())
            _, status = plugin.pre_filter(state, p, infos)
            if status is not None:
                continue
            fits = [ni for ni in infos if plugin.filter(state, p, ni) is None]
            if fits and plugin.pre_score(state, p, fits) is None:
                scores = [plugin.score(state, p, ni)[0] for ni in fits]
                assert all(0 <= s <= 100 for s in scores)
                nonzero += any(scores)
    assert nonzero > 0
