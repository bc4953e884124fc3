"""VolumeBinding's PreScore / Score at v1.37.2 (StorageCapacityScoring beta, on by default): the score
cases of upstream's ``volume_binding_test.go`` (TestVolumeBinding, v1.37.2) with their default shape
{0: 10, 100: 0}, and the vectorized Filter + Score against the per-node calls.

As upstream's test, Score is asked for every node, also those Filter rejected (no PodVolumes: 0).
"""
from __future__ import annotations

import types

import numpy as np
import pytest

from fastsched.config.args import UtilizationShapePoint, VolumeBindingArgs
from fastsched.features import FeatureGates
from fastsched.framework.cycle_state import CycleState
from fastsched.framework.objects import ObjectStore
from fastsched.framework.status import Code, Status
from fastsched.plugins.volumebinding import STATE_KEY, new
from fastsched.plugins.volumebinding.binder import ERR_REASON_BIND_CONFLICT
from fastsched.sim.storage import (csi_driver_manifest, csi_storage_capacity_manifest, pv_manifest, pvc_manifest,
                                   storage_class_manifest)
from fastsched.snapshot import build_snapshot
from fastsched.plugins.helper.tests import volumes as support
from fastsched.plugins.helper.tests.volumes import node, pod

HOST = "kubernetes.io/hostname"
REGION, ZONE = "topology.kubernetes.io/region", "topology.kubernetes.io/zone"
NODE_KEY = "nodeKey"   # upstream binder_test.go nodeLabelKey
CLASSES = [storage_class_manifest("immediate-sc", binding_mode="Immediate"),
           storage_class_manifest("wait-sc", provisioner=""),
           storage_class_manifest("wait-hdd-sc", provisioner=""),
           storage_class_manifest("wait-sc-with-storage-capacity", provisioner="driver-with-storage-capacity"),
           csi_driver_manifest("driver-with-storage-capacity", storage_capacity=True)]
CAP_SC = "wait-sc-with-storage-capacity"


def _plugin(objects, gates, args):
    handle = types.SimpleNamespace(client=ObjectStore(support.test_objects(CLASSES + objects)), feature_gates=gates)
    return new(args, handle)


def _run(objects, claims, nodes, *, gates=None, args=None):
    """(PreScore code name or None, scores in ``nodes``' order), checking the vectorized paths give
    the same (the snapshot orders nodes by zone, as upstream's node tree)."""
    gates = gates or FeatureGates()
    p = pod("pod-a", claims)
    out = []
    for vectorized in (False, True):
        plugin = _plugin(objects, gates, args)
        batch = build_snapshot(nodes).batch()
        state = CycleState()
        _, status = plugin.pre_filter(state, p, batch)
        assert status is None, status
        if vectorized:
            plugin.filter_vectorized(state, p, batch)
        else:
            for ni in batch:
                plugin.filter(state, p, ni)
        status = plugin.pre_score(state, p, batch)
        if status is not None:
            out.append((status.code().name, None))
            continue
        if vectorized:
            scores, status = plugin.score_vectorized(state, p, batch)
            assert status is None
            by_name = {ni.node().name: int(s) for ni, s in zip(batch, np.asarray(scores))}
        else:
            by_name = {ni.node().name: plugin.score(state, p, ni)[0] for ni in batch}
        out.append((None, [by_name[n.name] for n in nodes]))
    assert out[0] == out[1]
    return out[0]


def _local(name, cls, capacity, host):
    return pv_manifest(name, capacity=capacity, storage_class=cls, node_affinity={HOST: [host]})


def _zonal(name, cls, capacity, region, zone):
    return pv_manifest(name, capacity=capacity, storage_class=cls, node_affinity={REGION: [region], ZONE: [zone]})


HOST_NODES = [node(n, {HOST: n}) for n in ("node-a", "node-b", "node-c")]
ZONE_NODES = [node(f"zone-{z}-node-{n}", {HOST: f"zone-{z}-node-{n}", REGION: f"region-{z}", ZONE: f"zone-{z}"})
              for z in "abc" for n in "ab"]
KEY_NODES = [node(n, {HOST: n, NODE_KEY: n}) for n in ("node-a", "node-b", "node-c")]
LOCAL = [_local("pv-a-0", "wait-sc", "200Gi", "node-a"), _local("pv-a-1", "wait-sc", "200Gi", "node-a"),
         _local("pv-b-0", "wait-sc", "100Gi", "node-b"), _local("pv-b-1", "wait-sc", "100Gi", "node-b")]
ZONAL = [_zonal("pv-a-0", "wait-sc", "200Gi", "region-a", "zone-a"),
         _zonal("pv-a-1", "wait-sc", "200Gi", "region-a", "zone-a"),
         _zonal("pv-b-0", "wait-sc", "100Gi", "region-b", "zone-b"),
         _zonal("pv-b-1", "wait-sc", "100Gi", "region-b", "zone-b")]


def _caps(**sizes):
    return [csi_storage_capacity_manifest(n, CAP_SC, size, {NODE_KEY: n.replace("_", "-")})
            for n, size in sizes.items()]


def _shape(*points):
    return VolumeBindingArgs(shape=[UtilizationShapePoint(u, s) for u, s in points])


OFF = FeatureGates("StorageCapacityScoring=false")


def test_default_shape_is_the_v137_one():
    # upstream defaults.go SetDefaults_VolumeBindingArgs with the gate on; test's defaultShapePoint
    assert VolumeBindingArgs().effective_shape(True) == [UtilizationShapePoint(0, 10), UtilizationShapePoint(100, 0)]


def test_local_volumes_with_close_capacity_are_preferred():
    claims = [pvc_manifest("pvc-a", storage_class="wait-sc", request="50Gi")]
    assert _run(claims + LOCAL, ["pvc-a"], HOST_NODES) == (None, [75, 50, 0])
    # StorageCapacityScoring disabled: PreScore skips
    assert _run(claims + LOCAL, ["pvc-a"], HOST_NODES, gates=OFF) == ("SKIP", None)


# Upstream v1.37.2 volume_binding_test.go, TestVolumeBinding: the two "(StorageCapacityScoring
# disabled)" rows with every check of upstream's row: PreFilter's result and status, the state it
# leaves (claims, the PVs of the claims' class, no PodVolumes yet), Filter's status on each node
# (per node and vectorized) and PreScore's Skip. The gate off (fts.EnableStorageCapacityScoring
# false) is the handle's feature gates; args unset (upstream's default args have no shape then).
NO_PV = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_BIND_CONFLICT)
SCORING_DISABLED_CASES = [
    ("local volumes with close capacity are preferred (StorageCapacityScoring disabled)", LOCAL, HOST_NODES,
     [None, None, NO_PV]),
    ("zonal volumes with close capacity are preferred (StorageCapacityScoring disabled)", ZONAL, ZONE_NODES,
     [None, None, None, None, NO_PV, NO_PV]),
]


@pytest.mark.parametrize("vectorized", [False, True], ids=["per-node", "vectorized"])
@pytest.mark.parametrize("name,pvs,nodes,want_filter", SCORING_DISABLED_CASES,
                         ids=[c[0] for c in SCORING_DISABLED_CASES])
def test_storage_capacity_scoring_disabled(name, pvs, nodes, want_filter, vectorized):
    claims = [pvc_manifest("pvc-a", storage_class="wait-sc", request="50Gi")]
    plugin = _plugin(claims + pvs, OFF, None)
    batch = build_snapshot(nodes).batch()
    p = pod("pod-a", ["pvc-a"])
    state = CycleState()
    result, status = plugin.pre_filter(state, p, batch)
    assert result is None and status is None
    data = state.read(STATE_KEY)
    assert data.claims.bound_claims == [] and data.claims.unbound_claims_immediate == []
    assert [(c.name, c.storage_class_name) for c in data.claims.unbound_claims_delay_binding] == [("pvc-a", "wait-sc")]
    assert {cls: sorted(pv.name for pv in volumes)
            for cls, volumes in data.claims.unbound_volumes_delay_binding.items()} == {
        "wait-sc": ["pv-a-0", "pv-a-1", "pv-b-0", "pv-b-1"]}
    assert data.pod_volumes_by_node == {}
    if vectorized:
        v = plugin.filter_vectorized(state, p, batch)
        got = {ni.node().name: v if isinstance(v, Status) else v.status(i) for i, ni in enumerate(batch)}
    else:
        got = {ni.node().name: plugin.filter(state, p, ni) for ni in batch}
    for n, want in zip(nodes, want_filter):
        got_status = got[n.name]
        assert (got_status is None and want is None) or (
            got_status is not None and want is not None and got_status.code() == want.code()
            and got_status.reasons() == want.reasons()), (n.name, got_status, want)
    status = plugin.pre_score(state, p, batch)
    assert status is not None and status.code() == Code.SKIP and status.reasons() == []


def test_local_volumes_with_close_capacity_are_preferred_multiple_pvcs():
    pvs = [_local("pv-a-0", "wait-sc", "200Gi", "node-a"), _local("pv-a-1", "wait-sc", "200Gi", "node-a"),
           _local("pv-a-2", "wait-hdd-sc", "200Gi", "node-a"), _local("pv-a-3", "wait-hdd-sc", "200Gi", "node-a"),
           _local("pv-b-0", "wait-sc", "100Gi", "node-b"), _local("pv-b-1", "wait-sc", "100Gi", "node-b"),
           _local("pv-b-2", "wait-hdd-sc", "100Gi", "node-b"), _local("pv-b-3", "wait-hdd-sc", "100Gi", "node-b")]
    claims = [pvc_manifest("pvc-0", storage_class="wait-sc", request="50Gi"),
              pvc_manifest("pvc-1", storage_class="wait-hdd-sc", request="100Gi")]
    assert _run(claims + pvs, ["pvc-0", "pvc-1"], HOST_NODES) == (None, [63, 25, 0])


def test_zonal_volumes_with_close_capacity_are_preferred():
    claims = [pvc_manifest("pvc-a", storage_class="wait-sc", request="50Gi")]
    assert _run(claims + ZONAL, ["pvc-a"], ZONE_NODES) == (None, [75, 75, 50, 50, 0, 0])
    assert _run(claims + ZONAL, ["pvc-a"], ZONE_NODES, gates=OFF) == ("SKIP", None)
    # custom shape {0: 0, 50: 3, 100: 5}
    got = _run(claims + ZONAL, ["pvc-a"], ZONE_NODES, args=_shape((0, 0), (50, 3), (100, 5)))
    assert got == (None, [15, 15, 30, 30, 0, 0])


def test_storage_capacity_score():
    claims = [pvc_manifest("pvc-dynamic", storage_class=CAP_SC, request="10Gi")]
    caps = _caps(node_a="100Gi", node_b="50Gi", node_c="10Gi")
    assert _run(claims + caps, ["pvc-dynamic"], KEY_NODES) == (None, [90, 80, 0])


def test_storage_capacity_score_with_static_binds():
    claims = [pvc_manifest("pvc-dynamic", storage_class=CAP_SC, request="10Gi"),
              pvc_manifest("pvc-static", storage_class="wait-sc", request="50Gi")]
    pvs = [_local(f"pv-static-{n}", "wait-sc", "100Gi", f"node-{n}") for n in "abc"]
    caps = _caps(node_a="100Gi", node_b="50Gi", node_c="10Gi")
    assert _run(claims + pvs + caps, ["pvc-dynamic", "pvc-static"], KEY_NODES) == (None, [50, 50, 50])


def test_dynamic_provisioning_with_multiple_pvcs_of_the_same_storage_class():
    claims = [pvc_manifest("pvc-dynamic-0", storage_class=CAP_SC, request="50Gi"),
              pvc_manifest("pvc-dynamic-1", storage_class=CAP_SC, request="50Gi")]
    assert _run(claims + _caps(node_a="100Gi"), ["pvc-dynamic-0", "pvc-dynamic-1"], KEY_NODES[:1]) == (None, [0])


@pytest.mark.parametrize("args,want", [
    (_shape((0, 0), (100, 10)), [10, 50, 100]),       # prefer node with least allocatable
    (_shape((0, 10), (100, 0)), [90, 50, 0]),          # prefer node with maximum allocatable (the default)
], ids=["least allocatable", "maximum allocatable"])
def test_prefer_node_by_allocatable(args, want):
    claims = [pvc_manifest("pvc-dynamic", storage_class=CAP_SC, request="10Gi")]
    caps = _caps(node_a="100Gi", node_b="20Gi", node_c="10Gi")
    assert _run(claims + caps, ["pvc-dynamic"], KEY_NODES, args=args) == (None, want)


def test_pod_without_claims_is_scored_zero_everywhere():
    """PreFilter answers Skip and keeps an empty state; with the gate PreScore does not skip and
    Score gives 0 (no PodVolumes for the node): upstream PreScore / Score."""
    plugin = _plugin([], FeatureGates(), None)
    batch = build_snapshot(HOST_NODES).batch()
    state = CycleState()
    p = pod("p")
    _, status = plugin.pre_filter(state, p, batch)
    assert status is not None and status.code() == Code.SKIP
    assert plugin.pre_score(state, p, batch) is None
    assert [plugin.score(state, p, ni)[0] for ni in batch] == [0, 0, 0]
    scores, status = plugin.score_vectorized(state, p, batch)
    assert status is None and np.asarray(scores).tolist() == [0, 0, 0]


@pytest.mark.parametrize("seed", range(3))
def test_pods_without_claims_take_the_fused_cycle_and_place_as_the_plugin_calls(seed):
    """With the gate on, a pod without claims scores 0 everywhere: its column form stays the
    per-spec one (a constant score), so it takes the fused cycle, and the placements (node,
    message, round-robin index, RNG state) equal the plugin-call path's."""
    import random

    from fastsched import Scheduler
    from fastsched.testing import RANDOM_RUNTIME_CLASS, random_cluster, random_pod

    def run(compiled):
        s = Scheduler(seed=seed)
        s.use_compiled_cycle = compiled
        nodes, running = random_cluster(seed, 60, 120)
        s.add_nodes(nodes)
        s.add(RANDOM_RUNTIME_CLASS)  # (a fifth of random_pod's pods name it)
        s.add_pods(running)
        rng = random.Random(seed)
        s.add_pods([random_pod(rng, i) for i in range(40)])
        out = [(r.pod.name, r.node_name, str(r.status), r.message) for r in s.run()]
        (fw,) = s.profiles.values()
        return out, s.next_start_node_index, s.rng.bit_generator.state, fw.compiled_cycle

    fused, fused_start, fused_rng, engine = run(True)
    plain, plain_start, plain_rng, _ = run(False)
    assert (fused, fused_start, fused_rng) == (plain, plain_start, plain_rng)
    assert engine.fused_cycles >= 20, (engine.fused_cycles, engine.declined_cycles)


def test_vectorized_score_over_filter_windows_and_a_subset_of_the_nodes():
    """The scheduler filters in windows (several vectorized Filter calls) and scores the feasible
    nodes only, in its own order: each node takes the score of its own Filter group, as the per-node
    Score finds it (nodes Filter rejected, without PodVolumes, score 0)."""
    claims = [pvc_manifest("pvc-a", storage_class="wait-sc", request="50Gi")]
    nodes = HOST_NODES + [node("node-d", {HOST: "node-d"})]
    objects = claims + LOCAL + [_local("pv-d-0", "wait-sc", "400Gi", "node-d")]
    p = pod("pod-a", ["pvc-a"])
    plugin = _plugin(objects, FeatureGates(), None)
    batch = build_snapshot(nodes).batch()
    state = CycleState()
    _, status = plugin.pre_filter(state, p, batch)
    assert status is None, status
    plugin.filter_vectorized(state, p, batch[:1])
    plugin.filter_vectorized(state, p, batch[1:])
    assert plugin.pre_score(state, p, batch) is None
    subset = batch.select(np.array([3, 0, 2]))
    scores, status = plugin.score_vectorized(state, p, subset)
    assert status is None
    per_node = [plugin.score(state, p, ni)[0] for ni in subset]
    assert np.asarray(scores).tolist() == per_node
    assert sorted(per_node) == [0, 75, 88]   # node-c has no volume; 50 of 200 -> 75; 50 of 400 -> 87.5


@pytest.mark.parametrize("seed", range(12))
def test_vectorized_score_against_the_per_node_score_on_random_clusters(seed):
    """Seeded random clusters (local and zonal PVs of two classes, storage capacities per node,
    nodes without any), a pod with 1-2 claims, the vectorized Filter over random windows of the
    node order (in some runs a further batch repeating rows, so rows are filtered twice and a
    batch holds a row more than once), then the vectorized Score on a random subset of the nodes
    in random order against the per-node Score (``_StateData.pod_volumes``)."""
    import random
    rng = random.Random(seed)
    names = [f"n{i}" for i in range(rng.randint(4, 30))]
    zones = ["a", "b", "c"][:rng.randint(1, 3)]
    nodes = []
    for n in names:
        z = rng.choice(zones)
        nodes.append(node(n, {HOST: n, REGION: f"region-{z}", ZONE: f"zone-{z}", NODE_KEY: n}))
    claims = [pvc_manifest(f"pvc-{c}", storage_class=rng.choice(["wait-sc", CAP_SC]),
                           request=f"{rng.randint(1, 300)}Gi") for c in range(rng.randint(1, 2))]
    objects: list = list(claims)
    for i in range(rng.randint(0, 3 * len(names))):
        cap = f"{rng.randint(1, 500)}Gi"
        if rng.random() < 0.5:
            objects.append(_local(f"pv-{i}", "wait-sc", cap, rng.choice(names)))
        else:
            z = rng.choice(zones)
            objects.append(_zonal(f"pv-{i}", "wait-sc", cap, f"region-{z}", f"zone-{z}"))
    objects += _caps(**{n: f"{rng.randint(0, 600)}Gi" for n in names if rng.random() < 0.7})
    p = pod("pod-a", [c["metadata"]["name"] for c in claims])
    plugin = _plugin(objects, FeatureGates(), None)
    batch = build_snapshot(nodes).batch()
    state = CycleState()
    _, status = plugin.pre_filter(state, p, batch)
    if status is not None:
        return  # (an unsatisfiable claim set: nothing to score)
    n = len(batch)
    cuts = sorted(rng.sample(range(1, n), min(n - 1, rng.randint(0, 3))))
    for lo, hi in zip([0] + cuts, cuts + [n]):
        plugin.filter_vectorized(state, p, batch[lo:hi])
    if rng.random() < 0.5:  # a batch with repeated rows, filtered again
        plugin.filter_vectorized(state, p, batch.select(np.array([rng.randrange(n) for _ in range(rng.randint(1, 2 * n))])))
    if plugin.pre_score(state, p, batch) is not None:
        return
    subset = batch.select(np.array(rng.sample(range(n), rng.randint(1, n))))
    scores, status = plugin.score_vectorized(state, p, subset)
    assert status is None
    per_node = [plugin.score(state, p, ni)[0] for ni in subset]
    assert np.asarray(scores).tolist() == per_node
