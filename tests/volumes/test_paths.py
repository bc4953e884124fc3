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
    assert exercised > 0  # some pending pod found a feasible node, so Score ran on both paths


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


def _schedule(seed: int, compiled: bool, gates: dict | None = None):
    """A Scheduler over a random storage cluster (60 nodes), its pending pods with claims run in
    two rounds with a deletion between: (scheduler, outcome, bindings)."""
    node_ms, object_ms, pod_ms = random_storage_cluster(seed, nodes=60, pvs=80, claims=70)
    return two_rounds(seed, node_ms, object_ms, pod_ms, compiled=compiled, gates=gates)


def two_rounds(seed: int, node_ms: list, object_ms: list, pod_ms: list, *, compiled: bool, gates: dict | None,
               shuffle: bool = False):
    """A Scheduler of ``node_ms`` and ``object_ms`` running ``pod_ms`` (shuffled by ``seed`` if
    asked) in two rounds with three placed pods deleted between: (scheduler, (outcome, the
    claims' and PVs' bindings, the next start index, the RNG state)), for comparing paths."""
    from fastsched.scheduler import Scheduler

    rng = random.Random(seed)
    s = Scheduler(seed=seed, feature_gates=gates)
    s.use_compiled_cycle = compiled
    s.add(node_ms)
    s.add(object_ms)
    pods = load_objects(pod_ms)
    if shuffle:
        rng.shuffle(pods)
    half = len(pods) // 2
    s.add_pods(pods[:half])
    first = s.run()
    placed = [r.pod for r in first if r.node_name]
    for p in rng.sample(placed, k=min(3, len(placed))):
        s.delete_pod(p)
    s.add_pods(pods[half:])
    second = s.run()
    outcome = [(r.pod.name, r.node_name, r.status, r.message, r.attempts) for r in (*first, *second)]
    bindings = (sorted((o["metadata"]["name"], o["spec"].get("volumeName"), o.get("status", {}).get("phase"))
                       for o in s.objects("PersistentVolumeClaim")),
                sorted((o["metadata"]["name"], (o["spec"].get("claimRef") or {}).get("name"),
                        o.get("status", {}).get("phase")) for o in s.objects("PersistentVolume")))
    return s, (outcome, bindings, s.next_start_node_index, s.rng.bit_generator.state)


@pytest.mark.parametrize("gates", [None, {"StorageCapacityScoring": True}], ids=["default", "capacity-scoring"])
@pytest.mark.parametrize("seed", range(4))
def test_compiled_cycle_places_pods_with_claims_as_the_plugin_call_path(seed, gates):
    """The volume plugins' CYCLE forms: pods with claims take the fused cycle, and every placement,
    message, claim binding, provisioned volume, start index and RNG state equals the plugin-call
    path's."""
    fused, fused_out = _schedule(seed, True, gates)
    plain, plain_out = _schedule(seed, False, gates)
    assert fused_out == plain_out
    (fw,) = fused.profiles.values()
    assert fw.compiled_cycle.fused_cycles >= 10, (fw.compiled_cycle.fused_cycles, fw.compiled_cycle.declined_cycles)
    assert any(r.node_name for r in fused.pod_results() if r.pod.volumes)
