"""NodeVolumeLimits: Skip and pass for pods without CSI volumes, rejection of the others, events."""
from __future__ import annotations

import random

import pytest

from fastsched.framework.cycle_state import CycleState
from fastsched.framework.interface import ActionType, ClusterEvent, EventResource
from fastsched.framework.status import Code
from fastsched.plugins import in_tree_registry
from fastsched.plugins.nodevolumelimits import NAME, REASON_NOT_MODELLED, NodeVolumeLimits, new
from fastsched.plugins.volumebinding.tests.support import (HARMLESS, VOLUMES, implemented_points, pod_with_volumes,
                                                           random_volume_pod, snake_volume, statuses_agree)
from fastsched.runtime.framework import new_framework
from fastsched.testing import assert_paths_equivalent, random_snapshot, single_plugin_profile

UNMODELLED = ("persistentVolumeClaim", "ephemeral", "gcePersistentDisk", "awsElasticBlockStore", "cinder",
              "azureDisk", "azureFile", "vsphereVolume", "portworxVolume")


def test_reason_wording():
    assert REASON_NOT_MODELLED == ("NodeVolumeLimits: pods with PersistentVolumeClaims, generic ephemeral volumes "
                                   "or CSI-migratable inline volumes are not modelled by fastsched")


def test_extension_points():
    plugin = new(None, None)
    assert implemented_points(plugin) == {"pre_filter", "filter"}
    assert plugin.pre_filter_extensions() is None


@pytest.mark.parametrize("volumes", [(), tuple(VOLUMES[s] for s in HARMLESS), (VOLUMES["rbd"], VOLUMES["iscsi"])])
def test_pods_without_csi_volumes(volumes):
    # Inline CSI volumes, rbd (translation removed in v1.31) and iscsi are not counted upstream.
    plugin = NodeVolumeLimits()
    pod = pod_with_volumes(*volumes)
    _, status = plugin.pre_filter(CycleState(), pod, [])
    assert status.code() == Code.SKIP
    snapshot = random_snapshot(2, 30, 30)
    assert statuses_agree(plugin, CycleState(), pod, snapshot.batch()) == [None] * 30


@pytest.mark.parametrize("source", UNMODELLED)
def test_pods_with_csi_volumes_are_rejected(source):
    for volume in (VOLUMES[source], snake_volume(source)):
        pod = pod_with_volumes(VOLUMES["secret"], volume)
        _, status = NodeVolumeLimits().pre_filter(CycleState(), pod, [])
        assert (status.code(), status.reasons()) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [REASON_NOT_MODELLED])


def test_events_to_register():
    want = [ClusterEvent(EventResource.CSI_NODE, ActionType.ADD), ClusterEvent(EventResource.POD, ActionType.DELETE),
            ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD),
            ClusterEvent("storage.k8s.io/VolumeAttachment", ActionType.DELETE)]
    assert [e.event for e in new(None, None).events_to_register()] == want


def test_random_equivalence():
    fw = new_framework(in_tree_registry(), single_plugin_profile(NAME))
    plugin = fw.plugin(NAME)
    rejected = skipped = 0
    for seed in range(10):
        snapshot = random_snapshot(seed, 200, 400)
        batch = snapshot.batch()
        rng = random.Random(seed)
        for i in range(6):
            pod = random_volume_pod(rng, i, UNMODELLED)
            summary = assert_paths_equivalent(fw, snapshot, pod)
            verdicts = statuses_agree(plugin, CycleState(), pod, batch)
            if summary["prefilter"] is not None:
                assert summary["prefilter"].reasons() == [REASON_NOT_MODELLED]
                assert verdicts[0].reasons() == [REASON_NOT_MODELLED]
                rejected += 1
            else:
                assert summary["feasible"] == len(batch) and verdicts == [None] * len(batch)
                skipped += 1
    assert rejected >= 8 and skipped >= 30, (rejected, skipped)
