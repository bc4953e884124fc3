"""The compiled cycle's per-cycle shortcuts for pods with claims (framework.columns.CycleFilterShortcuts):
VolumeBinding's and NodeVolumeLimits' ``filter_passes_everywhere`` and VolumeBinding's
``score_zero_everywhere``, against the Filter and Score they stand for, plugin by plugin and through
whole scheduling runs (seeded random clusters with claims: bound to PVs with or without node
affinity or zone labels, missing PVs and claims, WaitForFirstConsumer and Immediate classes,
CSINodes with limits or none, in-tree and CSI sources as scheduler_perf's volume cases make them)."""
from __future__ import annotations

import random

import numpy as np
import pytest

from fastsched.api.load import load_objects
from fastsched.framework.cycle_state import CycleState
from fastsched.framework.objects import ObjectStore
from fastsched.framework.status import Status
from fastsched.framework.vectorized import FilterVerdicts
from fastsched.plugins import in_tree_registry
from fastsched.plugins.nodevolumelimits import NodeVolumeLimits
from fastsched.plugins.volumebinding import STATE_KEY, VolumeBinding
from fastsched.runtime import new_framework
from fastsched.sim.storage import csi_node_manifest, perf_volume_pair, pod_with_claims, random_storage_cluster
from fastsched.snapshot import build_snapshot
from fastsched.testing import single_plugin_profile
from tests.volumes.test_paths import two_rounds

PV_AWS = {"apiVersion": "v1", "kind": "PersistentVolume",
          "spec": {"accessModes": ["ReadOnlyMany"], "awsElasticBlockStore": {"volumeID": "<volume-id>"},
                   "capacity": {"storage": "1Gi"}, "persistentVolumeReclaimPolicy": "Retain"}}
PV_CSI = {"apiVersion": "v1", "kind": "PersistentVolume",
          "spec": {"accessModes": ["ReadOnlyMany"], "capacity": {"storage": "1Gi"},
                   "csi": {"driver": "ebs.csi.aws.com"}, "persistentVolumeReclaimPolicy": "Retain"}}
PVC = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
       "metadata": {"annotations": {"pv.kubernetes.io/bind-completed": "true"}},
       "spec": {"accessModes": ["ReadOnlyMany"], "resources": {"requests": {"storage": "1Gi"}}}}


def _cluster(seed: int, csi_nodes: str, perf_pods: int = 12):
    """A random storage cluster plus ``perf_pods`` pods each with its own PV and claim as
    scheduler_perf makes them (EBS or CSI source, some PVs given a zone affinity, some claims left
    without their PV): node, object and pod manifests. ``csi_nodes``: "random" (the random
    cluster's, differing per node), "none", or "uniform" (every node the same CSINode with small
    limits, as the CSINode-limited volume cases: some nodes reach them)."""
    rng = random.Random(seed)
    node_ms, object_ms, pod_ms = random_storage_cluster(seed, nodes=40, pvs=40, claims=40)
    if csi_nodes != "random":
        object_ms = [o for o in object_ms if o["kind"] != "CSINode"]
    if csi_nodes == "uniform":
        limits = {"ebs.csi.aws.com": rng.choice([1, 2]), "csi.example.com": rng.choice([1, 2, None])}
        migrated = ["kubernetes.io/aws-ebs"] if rng.random() < 0.5 else []
        object_ms += [csi_node_manifest(n["metadata"]["name"], limits, migrated_plugins=migrated) for n in node_ms]
    for i in range(perf_pods):
        pv, pvc, volume = perf_volume_pair(rng.choice([PV_AWS, PV_CSI]), PVC, "default", 1000 + seed * 100 + i)
        r = rng.random()
        if r < 0.15:
            pv["spec"]["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["zone-0"]}]}]}}
        if r > 0.9:
            object_ms.append(pvc)   # its PV missing
        else:
            object_ms += [pv, pvc]
        pod = pod_with_claims(f"perf-{i}", [volume["persistentVolumeClaim"]["claimName"]])
        pod_ms.append(pod)
    return node_ms, object_ms, pod_ms


def _verdicts(res, n):
    if isinstance(res, Status):
        return [(res.code(), tuple(res.reasons()))] * n
    assert isinstance(res, FilterVerdicts)
    return [None if (s := res.status(i)) is None else (s.code(), tuple(s.reasons())) for i in range(n)]


@pytest.mark.parametrize("csi_nodes", ["none", "random", "uniform"])
@pytest.mark.parametrize("seed", range(4))
def test_filter_passes_everywhere_stands_for_the_filter(seed, csi_nodes):
    """Where a plugin answers True after PreFilter, its vectorized Filter (on a fresh state, as
    the windows would ask it) passes every node, and VolumeBinding's state gives every node the
    PodVolumes the Filter would have given it; its ``score_zero_everywhere`` answering True comes
    with a Score of 0 on every node (with and without StorageCapacityScoring)."""
    node_ms, object_ms, pod_ms = _cluster(seed, csi_nodes, perf_pods=40)
    nodes, objects, pods = load_objects(node_ms), load_objects(object_ms), load_objects(pod_ms)
    rng = random.Random(seed)
    # half the pods on nodes of 8 (their volumes count against the limits), half to judge
    existing = [p.with_node_name(rng.choice(nodes[:8]).name) for p in pods[::2]]
    pods = pods[1::2] + existing[:5]
    snapshot = build_snapshot(nodes, existing)
    batch = snapshot.batch()
    table = snapshot.table
    taken = {"VolumeBinding": 0, "NodeVolumeLimits": 0, "score": 0, "NodeVolumeLimits declined": 0}
    for gates in (None, {"StorageCapacityScoring": True}):
        for name in ("VolumeBinding", "NodeVolumeLimits"):
            fw = new_framework(in_tree_registry(), single_plugin_profile(name), snapshot_shared_lister=snapshot,
                               client=ObjectStore(objects), feature_gates=gates)
            pl = fw.plugin(name)
            for p in pods:
                short, full = CycleState(), CycleState()
                _, s1 = pl.pre_filter(short, p, batch)
                _, s2 = pl.pre_filter(full, p, batch)
                assert (s1 is None) == (s2 is None)
                if s1 is not None and not s1.is_success():
                    continue
                everywhere = pl.filter_passes_everywhere(short, p, table)
                res = pl.filter_vectorized(full, p, batch)
                verdicts = _verdicts(res, len(batch))
                if everywhere:
                    taken[name] += 1
                    assert verdicts == [None] * len(batch), p.volumes
                elif name == "NodeVolumeLimits" and any(verdicts):
                    taken["NodeVolumeLimits declined"] += 1
                if name != "VolumeBinding":
                    continue
                if everywhere:
                    got = [short.read(STATE_KEY).pod_volumes(ni.name) for ni in batch]
                    want = [full.read(STATE_KEY).pod_volumes(ni.name) for ni in batch]
                    assert [(v.static_bindings, v.dynamic_provisions, v.provision_capacities) for v in got] == \
                        [(v.static_bindings, v.dynamic_provisions, v.provision_capacities) for v in want]
                    assert short.read(STATE_KEY).has_static_bindings == full.read(STATE_KEY).has_static_bindings
                    assert len({id(v) for v in got}) == len(got)   # each node its own, as upstream's
                for state in (short, full) if everywhere else (full,):
                    if pl.score_zero_everywhere(state, p):
                        scores, st = pl.score_vectorized(state, p, batch)
                        assert st is None and not np.asarray(scores).any(), p.volumes
                        taken["score"] += 1
    assert taken["VolumeBinding"] > 0 and taken["score"] > 0
    if csi_nodes != "random":
        assert taken["NodeVolumeLimits"] > 0
    if csi_nodes == "uniform":   # (and some node over a limit: answered False there)
        assert taken["NodeVolumeLimits declined"] > 0


def test_score_zero_everywhere_is_false_where_the_score_is_not():
    """StorageCapacityScoring on, claims binding static PVs: some node scores above 0, and there
    ``score_zero_everywhere`` must not answer True."""
    checked = 0
    for seed in range(6):
        node_ms, object_ms, pod_ms = random_storage_cluster(300 + seed, nodes=14, pvs=24, claims=20)
        nodes, objects, pods = load_objects(node_ms), load_objects(object_ms), load_objects(pod_ms)
        snapshot = build_snapshot(nodes)
        batch = snapshot.batch()
        fw = new_framework(in_tree_registry(), single_plugin_profile("VolumeBinding"), snapshot_shared_lister=snapshot,
                           client=ObjectStore(objects), feature_gates={"StorageCapacityScoring": True})
        pl = fw.plugin("VolumeBinding")
        for p in pods:
            state = CycleState()
            _, s = pl.pre_filter(state, p, batch)
            if s is not None:
                continue
            res = pl.filter_vectorized(state, p, batch)
            if isinstance(res, Status):
                continue
            scores, _ = pl.score_vectorized(state, p, batch)
            if np.asarray(scores).any():
                checked += 1
                assert not pl.score_zero_everywhere(state, p)
    assert checked > 0


def _schedule(seed: int, csi_nodes: str, compiled: bool, gates: dict | None):
    node_ms, object_ms, pod_ms = _cluster(seed, csi_nodes, perf_pods=30)
    return two_rounds(seed, node_ms, object_ms, pod_ms, compiled=compiled, gates=gates, shuffle=True)


@pytest.mark.parametrize("gates", [None, {"StorageCapacityScoring": False}], ids=["default", "no-capacity-scoring"])
@pytest.mark.parametrize("csi_nodes", ["none", "random", "uniform"])
@pytest.mark.parametrize("seed", range(3))
def test_shortcuts_place_as_the_windows_and_the_plugin_call_path(seed, csi_nodes, gates, monkeypatch):
    """Whole runs: the compiled cycle with the shortcuts, without them (every CYCLE Filter asked
    per window, every Score called) and the plugin-call path give the same placements, messages,
    claim bindings, start index and RNG state; the shortcuts were taken."""
    calls = {"filter": 0, "score": 0}
    original_f = {cls: cls.filter_passes_everywhere for cls in (VolumeBinding, NodeVolumeLimits)}
    original_s = VolumeBinding.score_zero_everywhere

    def counting(cls):
        def f(self, state, pod, table):
            out = original_f[cls](self, state, pod, table)
            calls["filter"] += out
            return out
        return f

    def counting_score(self, state, pod):
        out = original_s(self, state, pod)
        calls["score"] += out
        return out

    with monkeypatch.context() as m:
        for cls in original_f:
            m.setattr(cls, "filter_passes_everywhere", counting(cls))
        m.setattr(VolumeBinding, "score_zero_everywhere", counting_score)
        fast, fast_out = _schedule(seed, csi_nodes, True, gates)
    # (without StorageCapacityScoring PreScore answers Skip: no Score to stand for)
    assert calls["filter"] > 0 and (calls["score"] > 0) == (gates is None)
    with monkeypatch.context() as m:
        for cls in original_f:
            m.delattr(cls, "filter_passes_everywhere")
        m.delattr(VolumeBinding, "score_zero_everywhere")
        _, windows_out = _schedule(seed, csi_nodes, True, gates)
    _, plain_out = _schedule(seed, csi_nodes, False, gates)
    assert fast_out == windows_out
    assert fast_out == plain_out
    (fw,) = fast.profiles.values()
    assert fw.compiled_cycle.fused_cycles >= 10
