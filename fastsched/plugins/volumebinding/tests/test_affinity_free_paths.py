"""The short cuts for PVs without node affinity (one new PV a pod in scheduler_perf's volume cases)
and the Reserve-time lookup of a node's PodVolumes, against the full computations."""
from __future__ import annotations

import numpy as np
import pytest

from fastsched._kernels import _table
from fastsched.api.load import load_objects
from fastsched.plugins.nodevolumelimits import NodeVolumeLimits
from fastsched.plugins.volumebinding import _MigratedEverywhere
from fastsched.plugins.volumebinding.binder import migration_dependent, translated_node_affinity, without_affinity
from fastsched.sim.storage import pv_manifest

GA_ZONE, BETA_ZONE = "topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
SOURCES = [{"awsElasticBlockStore": {"volumeID": "vol-1"}}, {"gcePersistentDisk": {"pdName": "pd-1"}},
           {"azureDisk": {"diskName": "d", "diskURI": "uri"}}, {"cinder": {"volumeID": "c-1"}},
           {"rbd": {"monitors": ["m"], "image": "i"}}, None]
LABELS = [{}, {GA_ZONE: "z1"}, {BETA_ZONE: "z1__z2"}, {BETA_REGION: "r1"}, {"other": "x"}]
AFFINITIES = [None, {GA_ZONE: ["z1"]}, {BETA_ZONE: ["z1"]}, {BETA_REGION: ["r1"]}, {"other": ["x"]}]


def _pv(source, labels, affinity):
    return load_objects([pv_manifest("pv", source=source, labels=labels, node_affinity=affinity)], validate=False)[0]


def _full_translation(pv, csi_node):
    """translated_node_affinity without the short cut (its guard patched out)."""
    import fastsched.plugins.volumebinding.binder as binder
    saved = binder.without_affinity
    binder.without_affinity = lambda pv: False
    try:
        return translated_node_affinity(pv, csi_node)
    finally:
        binder.without_affinity = saved


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("labels", LABELS)
@pytest.mark.parametrize("affinity", AFFINITIES)
def test_translation_short_cut_answers_the_full_translation(source, labels, affinity):
    pv = _pv(source, labels, affinity)
    plugin = migration_dependent(pv)
    nodes = [None, _MigratedEverywhere(plugin)] if plugin else [None]
    for csi_node in nodes:
        assert translated_node_affinity(pv, csi_node) == _full_translation(pv, csi_node)
    if without_affinity(pv):
        # the short cut holds only where the translation has nothing to add: None everywhere
        assert all(_full_translation(pv, c) is None for c in nodes)
        assert affinity is None and GA_ZONE not in labels and BETA_ZONE not in labels


def test_the_short_cut_is_taken_for_the_perf_pvs_only():
    assert without_affinity(_pv(SOURCES[0], {}, None))
    assert not without_affinity(_pv(SOURCES[0], {GA_ZONE: "z1"}, None))
    assert not without_affinity(_pv(SOURCES[0], {BETA_ZONE: "z1"}, None))
    assert not without_affinity(_pv(SOURCES[0], {}, {"other": ["x"]}))
    # an AWS PV with a zone label and no affinity: migrated, the zone is added (the short cut must not hold)
    pv = _pv(SOURCES[0], {GA_ZONE: "z1"}, None)
    assert translated_node_affinity(pv, _MigratedEverywhere(migration_dependent(pv))) is not None


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("labels", LABELS)
def test_volume_limits_driver_info_without_a_csinode(source, labels):
    """NodeVolumeLimits' ``getCSIDriverInfo`` without a CSINode answers no driver for an in-tree
    PV (its plugin is not migrated there), as the full path through the translation."""
    from types import SimpleNamespace

    pv = _pv(source, labels, None)
    lister = SimpleNamespace(pv=lambda name: pv)
    pvc = SimpleNamespace(volume_name="pv")
    got = NodeVolumeLimits._driver_info(SimpleNamespace(), lister, None, pvc)
    if pv.source == "csi":
        assert got == (pv.csi_driver, pv.csi_volume_handle)
    else:
        assert got == ("", "")


@pytest.mark.parametrize("seed", range(6))
def test_last_position_against_numpy(seed):
    rng = np.random.default_rng(seed)
    for _ in range(200):
        n = int(rng.integers(0, 40))
        rows = rng.integers(0, 30, size=n).astype(np.int64)
        view = rows[::2] if rng.random() < 0.3 else rows   # strided views too
        for row in range(-1, 32):
            at = np.flatnonzero(view == row)
            assert _table.last_position(view, row) == (int(at[-1]) if len(at) else -1)


@pytest.mark.parametrize("seed", range(4))
def test_bound_node_free_filter_agrees_with_the_general_path(seed):
    """VolumeBinding's vectorized Filter for pods whose claims are all bound to PVs without node
    affinity (``_bound_node_free``) against the general path (key collection and FindPodVolumes),
    on seeded random claims: bound to PVs with and without affinity or zone labels, to a missing
    PV, or waiting for a node; the verdicts, the PodVolumes each node gets and the static-binding
    flag agree."""
    import random

    from fastsched.framework.cycle_state import CycleState
    from fastsched.framework.status import Status
    from fastsched.plugins.helper.tests.volumes import Handle, node, pod, pvc_manifest, storage_class_manifest
    from fastsched.plugins.volumebinding import STATE_KEY, VolumeBinding
    from fastsched.snapshot import build_snapshot

    rng = random.Random(seed)
    objects = [storage_class_manifest("wait", provisioner="kubernetes.io/no-provisioner")]
    names = []
    for i in range(12):
        kind = rng.random()
        claim = f"c{i}"
        names.append(claim)
        if kind < 0.7:   # bound (its PV maybe missing)
            objects.append(pvc_manifest(claim, volume_name=f"pv{i}", bound=True, storage_class="wait"))
            if rng.random() < 0.9:
                objects.append(pv_manifest(f"pv{i}", storage_class="wait", claim=("default", claim), phase="Bound",
                                           source=rng.choice(SOURCES), labels=rng.choice(LABELS),
                                           node_affinity=rng.choice(AFFINITIES[:3] + [None, None])))
        else:            # waiting for a node, with an available PV of the class or none
            objects.append(pvc_manifest(claim, storage_class="wait"))
            if rng.random() < 0.5:
                objects.append(pv_manifest(f"free{i}", storage_class="wait", node_affinity=rng.choice(AFFINITIES)))
    nodes = [node(f"n{j}", {GA_ZONE: rng.choice(["z1", "z2"]), BETA_REGION: "r1", "other": rng.choice(["x", "y"])})
             for j in range(6)]
    batch = build_snapshot(nodes).batch()
    fast_taken = 0
    for k in range(40):
        p = pod(f"p{k}", rng.sample(names, rng.randint(1, 3)))
        answers = []
        for force_general in (False, True):
            pl = VolumeBinding(handle=Handle(objects))
            if force_general:
                pl._bound_node_free = lambda s: False
            state = CycleState()
            _, pre = pl.pre_filter(state, p, batch)
            if pre is not None:
                answers.append(("prefilter", pre.code(), pre.reasons()))
                continue
            if not force_general and pl._bound_node_free(state.read(STATE_KEY)):
                fast_taken += 1
            v = pl.filter_vectorized(state, p, batch)
            verdicts = ([(v.code(), v.reasons())] * len(batch) if isinstance(v, Status) else
                        [(s.code(), s.reasons()) if (s := v.status(i)) is not None else None
                         for i in range(len(batch))])
            s = state.read(STATE_KEY)
            volumes = [s.pod_volumes(ni.name) for ni in batch]
            answers.append((verdicts, [None if pv is None else (pv.static_bindings, pv.dynamic_provisions,
                                                               pv.provision_capacities) for pv in volumes],
                            s.has_static_bindings))
        assert answers[0] == answers[1], p.volumes
    assert fast_taken > 0
